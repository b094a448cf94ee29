import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { EmbeddedReply, EmbeddedRequest, EngineCounters } from './embedded-protocol.js';
import type { RunStarter, Timing } from './phases.js';
import type { WorkerProcess } from './processes.js';

const EMBEDDED = fileURLToPath(new URL('./embedded-process.js', import.meta.url));

type Request = EmbeddedRequest extends infer R ? (R extends unknown ? Omit<R, 'id'> : never) : never;

/**
 * The embedded path's process (embedded-process.ts) seen from the benchmark: it starts runs (a
 * RunStarter), hands over its handlers' timings (a WorkerProcess to the TimingSink) and its engine's
 * counters.
 */
export interface EmbeddedChild extends WorkerProcess, RunStarter {
  deploy(yaml: string): Promise<void>;
  counters(): Promise<EngineCounters>;
}

/**
 * Starts the embedded path on a database: one process running the engine and `concurrency` handlers at
 * once, for runs of `definition`. Resolves once its engine and executor run.
 */
export async function startEmbeddedChild(
  databaseUrl: string,
  definition: string,
  concurrency: number,
  input: unknown = {},
): Promise<EmbeddedChild> {
  const child = fork(EMBEDDED, [], {
    // Extra node options for this process, as for the server's (such as `--cpu-prof`).
    execArgv: (process.env.WEFT_BENCH_EMBEDDED_NODE_ARGS ?? '').split(' ').filter(Boolean),
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      WEFT_BENCH_DEFINITION: definition,
      WEFT_CONCURRENCY: String(concurrency),
      WEFT_BENCH_INPUT: JSON.stringify(input),
    },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  await new Promise<void>((resolve, reject) => {
    child.once('message', () => resolve());
    child.once('exit', (code) => reject(new Error(`the embedded-path process exited with code ${code}`)));
  });
  let next = 0;
  const waiting = new Map<number, (r: EmbeddedReply) => void>();
  // Timings come unasked (id 0) as handlers finish; a dump takes them with the rest it asks for.
  let received: Timing[] = [];
  child.on('message', (r: EmbeddedReply) => {
    if (r.id === 0 && r.timings) {
      for (const t of r.timings) received.push(t);
      return;
    }
    waiting.get(r.id)?.(r);
    waiting.delete(r.id);
  });
  // A process that dies answers nothing more: what waits for it fails, naming the exit code.
  child.once('exit', (code) => {
    for (const answer of waiting.values())
      answer({ id: 0, error: `the embedded-path process exited with code ${code}` });
    waiting.clear();
  });
  const ask = (request: Request): Promise<EmbeddedReply> =>
    new Promise((resolve, reject) => {
      if (child.exitCode !== null)
        return reject(new Error(`the embedded-path process exited with code ${child.exitCode}`));
      const id = ++next;
      waiting.set(id, (r) =>
        r.error ? reject(new Error(`embedded path, ${request.cmd}: ${r.error}`)) : resolve(r),
      );
      child.send({ ...request, id });
    });
  return {
    child,
    async deploy(yaml) {
      await ask({ cmd: 'deploy', yaml });
    },
    async burst(count) {
      return new Map((await ask({ cmd: 'burst', count })).sent);
    },
    async paced(count, rate) {
      return new Map((await ask({ cmd: 'paced', count, rate })).sent);
    },
    async settled() {
      return (await ask({ cmd: 'settled' })).at!;
    },
    async dump(): Promise<Timing[]> {
      const rest = (await ask({ cmd: 'dump' })).timings!;
      const all = received;
      received = [];
      for (const t of rest) all.push(t);
      return all;
    },
    async counters() {
      return (await ask({ cmd: 'counters' })).counters!;
    },
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.send({ cmd: 'stop', id: ++next });
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
      if (child.exitCode === null) child.kill('SIGKILL');
    },
  };
}
