import { execFile } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const MAIN = fileURLToPath(new URL('../dist/main.js', import.meta.url));
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Whether something listens at the Redis URL's address (BullMQ's part runs only then). */
function redisListening(): Promise<boolean> {
  const u = new URL(REDIS_URL);
  return new Promise((resolve) => {
    const socket = connect(Number(u.port || 6379), u.hostname);
    socket.setTimeout(1000);
    const done = (answer: boolean) => {
      socket.destroy();
      resolve(answer);
    };
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
    socket.once('timeout', () => done(false));
  });
}
const haveRedis = await redisListening();

/** Runs `npm run bench -- --peers` at a tiny size; returns its output and JSON results. */
async function peers(redisUrl: string, repeat: number, name: string) {
  const out = await mkdtemp(join(tmpdir(), 'weft-peers-'));
  const { stdout, stderr } = await promisify(execFile)(
    process.execPath,
    [
      MAIN,
      '--peers',
      '--database-url',
      process.env.WEFT_TEST_ADMIN_URL!,
      '--db-name',
      `${process.env.WEFT_TEST_PREFIX}_${name}`,
      '--runs',
      '4',
      '--repeat',
      String(repeat),
      '--workers',
      '1',
      '--concurrency',
      '16',
      '--redis-url',
      redisUrl,
      '--out',
      out,
    ],
    { timeout: 280_000 },
  );
  const file = /results: (.+\.json)/.exec(stdout)![1]!;
  return { stdout, stderr, results: JSON.parse(await readFile(file, 'utf8')) };
}

type Round = {
  round: number;
  workload: string;
  samples: Record<string, { steps: number; stepsPerSec: number }>;
};

// Keeps --peers working: nothing here is timed; the figures are for `npm run bench -- --peers` to show.
describe('npm run bench -- --peers', () => {
  it('runs W1 and W2 on Weft and DBOS in interleaved rounds, skipping BullMQ when no Redis answers', async () => {
    const { stdout, stderr, results } = await peers('redis://127.0.0.1:1', 2, 'peers_noredis');
    expect(stderr).toMatch(/BullMQ: skipped: no Redis answered at redis:\/\/127\.0\.0\.1:1/);
    expect(stdout).toMatch(
      /round\s+workload\s+Weft server steps\/s\s+Weft embedded steps\/s\s+DBOS steps\/s\s+Weft server\/DBOS\s+Weft embedded\/DBOS/,
    );
    expect(stdout).toMatch(/DBOS: version: @dbos-inc\/dbos-sdk 5\.3\.0; .*synchronous_commit=\w+/);
    // Weft's worker processes run with the flags the worker SDK's README advises for handlers that wait.
    expect(stdout).toMatch(/Weft server: .*worker processes over HTTP \(node [^)]*--no-turbofan\)/);
    expect(results.skipped.BullMQ).toMatch(/no Redis answered/);
    expect(results.failed).toEqual({});
    expect(results.rounds.map((r: Round) => `${r.round}${r.workload}`)).toEqual(['1W1', '1W2', '2W1', '2W2']);
    for (const r of results.rounds as Round[]) {
      expect(Object.keys(r.samples)).toEqual(['Weft server', 'Weft embedded', 'DBOS']);
      for (const s of Object.values(r.samples)) {
        expect(s.steps).toBe(r.workload === 'W1' ? 4 * 6 : 4 * 10);
        expect(s.stepsPerSec).toBeGreaterThan(0);
      }
    }
    for (const m of results.medians) {
      expect(m.ratios['Weft server/DBOS']).toBeGreaterThan(0);
      expect(m.ratios['Weft embedded/DBOS']).toBeGreaterThan(0);
    }
  }, 290_000);

  it.skipIf(!haveRedis)(
    'runs BullMQ too when Redis answers, with its persistence printed',
    async () => {
      const { stdout, results } = await peers(REDIS_URL, 1, 'peers_redis');
      expect(stdout).toMatch(/BullMQ: version: bullmq 6\.7\.0, .*Redis persistence: appendonly=/);
      expect(results.skipped).toEqual({});
      expect(results.failed).toEqual({});
      for (const r of results.rounds as Round[])
        expect(r.samples.BullMQ!.steps).toBe(r.workload === 'W1' ? 4 * 6 : 4 * 10);
      for (const m of results.medians) expect(m.ratios['Weft server/BullMQ']).toBeGreaterThan(0);
    },
    290_000,
  );
});
