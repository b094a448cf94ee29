import { type ChildProcess, fork, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** How long a started server may take to answer before it is taken for hung. */
const START_BOUND_MS = 120_000;

const CLI = fileURLToPath(new URL('../../cli/bin/weft.js', import.meta.url));
const WORKER = fileURLToPath(new URL('./bench-worker.js', import.meta.url));
const FLOOR_SERVER = fileURLToPath(new URL('./floor-server.js', import.meta.url));

/** A Weft server child process. */
export interface ServerProcess {
  readonly url: string;
  readonly child: ChildProcess;
  stop(): Promise<void>;
}

/** Starts `weft server` on a database and waits until it answers. */
export async function startServer(databaseUrl: string, port: number): Promise<ServerProcess> {
  const nodeArgs = (process.env.WEFT_BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(
    process.execPath,
    [
      ...nodeArgs,
      CLI,
      'server',
      '--database-url',
      databaseUrl,
      '--port',
      String(port),
      '--log-level',
      'warn',
      // On loopback, measuring the engine: no keys to hand to every process.
      '--insecure-no-auth',
    ],
    {
      stdio: ['ignore', 'inherit', 'inherit'],
    },
  );
  return answering(child, port, 'the server');
}

/** Starts the protocol floor's server (see floor-server.ts) and waits until it answers. */
export async function startFloorServer(databaseUrl: string, port: number): Promise<ServerProcess> {
  const child = spawn(process.execPath, [FLOOR_SERVER], {
    env: { ...process.env, DATABASE_URL: databaseUrl, PORT: String(port) },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  return answering(child, port, 'the protocol floor server');
}

/**
 * Waits until a started HTTP process answers its health check. A process that exits is seen at once; the
 * bound is for one that hangs, and is wide: on a loaded machine (the test suite on two cores) a server
 * took over 30 s to answer.
 */
async function answering(child: ChildProcess, port: number, what: string): Promise<ServerProcess> {
  const url = `http://127.0.0.1:${port}`;
  const until = Date.now() + START_BOUND_MS;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${what} exited with code ${child.exitCode}`);
    try {
      const res = await fetch(`${url}/healthz`);
      if (res.ok) break;
    } catch {
      // not up yet
    }
    if (Date.now() > until) {
      child.kill('SIGKILL');
      throw new Error(`${what} did not answer within ${START_BOUND_MS / 1000} s of starting`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return { url, child, stop: () => stopChild(child, 'SIGTERM') };
}

/** A handler's run, node, start and end (wall-clock milliseconds), as a benchmark worker records it. */
export type Timing = [string, string, number, number];

/**
 * The V8 flags the benchmark's workers run with: what the worker SDK's README advises for a worker whose
 * handlers wait rather than compute, and the benchmark's handlers do no work at all. A small young generation
 * and an early first full collection (decisions 0173 and 0186); no optimizing compiler, whose code pages and
 * compile memory a worker of such handlers does not need (decision 0188). Extra flags come from
 * `WEFT_BENCH_WORKER_NODE_ARGS`.
 */
export function workerNodeFlags(): string[] {
  return [
    '--max-semi-space-size=1',
    '--initial-old-space-size=4',
    '--no-turbofan',
    ...(process.env.WEFT_BENCH_WORKER_NODE_ARGS ?? '').split(' ').filter(Boolean),
  ];
}

/** A benchmark worker child process. */
export interface WorkerProcess {
  readonly child: ChildProcess;
  /** Handler start and end times recorded since the last dump: [run, node, start, end]. */
  dump(): Promise<Timing[]>;
  stop(): Promise<void>;
}

/** Starts a benchmark worker process (no-op handlers) and waits until it polls. */
export async function startWorker(url: string, name: string, concurrency: number): Promise<WorkerProcess> {
  const child = fork(WORKER, [], {
    execArgv: [...process.execArgv, ...workerNodeFlags()],
    env: { ...process.env, WEFT_URL: url, WEFT_WORKER_NAME: name, WEFT_CONCURRENCY: String(concurrency) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  await new Promise<void>((resolve, reject) => {
    child.once('message', () => resolve());
    child.once('exit', (code) => reject(new Error(`worker ${name} exited with code ${code}`)));
  });
  // The worker sends its records as it goes; a dump asks it for the rest and takes all received so far.
  let received: Timing[] = [];
  const flushes: (() => void)[] = [];
  child.on('message', (m: { timings?: Timing[]; flushed?: boolean }) => {
    if (!m.timings) return;
    for (const t of m.timings) received.push(t);
    if (m.flushed) flushes.shift()?.();
  });
  return {
    child,
    dump: () =>
      new Promise((resolve) => {
        flushes.push(() => {
          const all = received;
          received = [];
          resolve(all);
        });
        child.send({ cmd: 'dump' });
      }),
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.send({ cmd: 'stop' });
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
      if (child.exitCode === null) child.kill('SIGKILL');
    },
  };
}

async function stopChild(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill(signal);
  await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
  if (child.exitCode === null) child.kill('SIGKILL');
}
