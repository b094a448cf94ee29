import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { connect } from '@weft/postgres';
import type { Workload } from '../workloads.js';

/** What one contender measured on one workload: the runs, the steps its handlers ran, and the wall time. */
export interface PeerRun {
  readonly runs: number;
  /** No-op steps the contender's handlers actually ran for the measured runs (checked against the shape). */
  readonly steps: number;
  /** From just before the first start call to the moment the last run's completion was seen. */
  readonly wallMs: number;
}

/**
 * A system measured by `npm run bench -- --peers`. Each `run` sets the contender up afresh (a fresh
 * database, a fresh queue), warms it up with the same number of runs as every other contender, then starts
 * `workload.runs` runs at once and times them to the last completion seen; then tears everything down.
 */
export interface Contender {
  /** Shown in the table and the JSON, e.g. `Weft server`. */
  readonly name: string;
  /** `weft` contenders are compared with every `peer`: a ratio column per pair. */
  readonly kind: 'weft' | 'peer';
  /** What this machine lacks for it (named so the user can fix it), or null when it can run. */
  missing(): Promise<string | null>;
  /** Its settings, printed with the table: versions, concurrency, pools, durability. */
  settings(): Promise<Record<string, string>>;
  run(workload: Workload): Promise<PeerRun>;
}

/** What every contender is given: where PostgreSQL and Redis are, and the process layout of the bench. */
export interface PeerEnv {
  /** An administrative URL of the PostgreSQL server (databases are created and dropped on it). */
  readonly baseUrl: string;
  /** Prefix of the scratch databases' names (the benchmark's own, never a user's value). */
  readonly dbName: string;
  readonly redisUrl: string;
  /** Processes that run steps, for the contenders that have worker processes. */
  readonly workers: number;
  /** Steps each of those processes runs at once. */
  readonly concurrency: number;
  /** Steps Weft's embedded path runs at once in its one process. */
  readonly embeddedConcurrency: number;
  /** Unmeasured bursts of the measured size each contender runs before its measured one. */
  readonly warmUpBursts: number;
  readonly log: (line: string) => void;
}

/**
 * The unmeasured bursts each contender runs, one after the other, before its measured one: `warmUpBursts`
 * of the measured size, the same for every contender, so that each is measured warm (its code compiled by
 * the JIT, its pools and caches filled), as a service that has been running is.
 */
export function warmUpBursts(env: Pick<PeerEnv, 'warmUpBursts'>, workload: Workload): number[] {
  return Array.from({ length: Math.max(0, env.warmUpBursts) }, () => workload.runs);
}

/**
 * The workload's nodes in layers: each layer's nodes depend only on nodes of earlier layers, so a layer can
 * run at once once the one before has ended. W1 is [a] [b c d e] [f]; W2 is ten layers of one.
 */
export function layersOf(workload: Workload): string[][] {
  const layerOf = new Map<string, number>();
  const place = (node: string): number => {
    const known = layerOf.get(node);
    if (known !== undefined) return known;
    const before = workload.predecessors[node] ?? [];
    const layer = before.length === 0 ? 0 : Math.max(...before.map(place)) + 1;
    layerOf.set(node, layer);
    return layer;
  };
  for (const node of Object.keys(workload.predecessors)) place(node);
  const layers: string[][] = [];
  for (const [node, layer] of layerOf) {
    layers[layer] = [...(layers[layer] ?? []), node];
  }
  return layers;
}

/** Wall-clock milliseconds with microsecond precision, comparable across the bench's processes. */
export const nowMs = () => performance.timeOrigin + performance.now();

/**
 * Starts `count` items over four lanes, `chunk` items a call: the same shape of start for every contender
 * (Weft's bulk start endpoint takes 100 runs a request).
 */
export async function inLanes(count: number, chunk: number, start: (size: number) => Promise<void>) {
  const chunks = Array.from({ length: Math.ceil(count / chunk) }, (_, i) =>
    Math.min(chunk, count - i * chunk),
  );
  let next = 0;
  const lane = async () => {
    while (next < chunks.length) await start(chunks[next++]!);
  };
  await Promise.all(Array.from({ length: 4 }, lane));
}

/** A URL fit to print: its password replaced by `***`. */
export function shownUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return url;
  }
}

/** The installed version of a package, or null when it cannot be found. */
export async function installed(name: string): Promise<string | null> {
  try {
    const entry = createRequire(import.meta.url).resolve(name);
    for (let dir = dirname(entry); dir !== dirname(dir); dir = dirname(dir)) {
      try {
        const pkg = JSON.parse(await readFile(join(dir, 'package.json'), 'utf8'));
        if (pkg.name === name) return pkg.version as string;
      } catch {
        // not the package's root yet
      }
    }
    return null;
  } catch {
    return null;
  }
}

/** `synchronous_commit=...` of the server at `url`. */
export async function synchronousCommit(url: string): Promise<string> {
  const sql = connect(url, { max: 1 });
  try {
    const [row] = await sql<{ sc: string }[]>`SELECT current_setting('synchronous_commit') AS sc`;
    return `synchronous_commit=${row!.sc}`;
  } finally {
    await sql.end();
  }
}
