import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Workload } from '../workloads.js';
import { jobId, lastNode, QUEUE, segmentFlow, segmentsOf } from './bullmq-flows.js';
import {
  type Contender,
  inLanes,
  installed,
  layersOf,
  nowMs,
  type PeerEnv,
  type PeerRun,
  shownUrl,
  warmUpBursts,
} from './contender.js';

const WORKER = fileURLToPath(new URL('./bullmq-worker.js', import.meta.url));

/**
 * BullMQ on Redis: a Worker with a concurrency in each of `workers` processes; the bench process adds the
 * runs as flows (FlowProducer.addBulk, 100 a call) and sees each run end through QueueEvents.
 */
export function bullmq(env: PeerEnv): Contender {
  let round = 0;
  return {
    name: 'BullMQ',
    kind: 'peer',
    async missing() {
      for (const name of ['bullmq', 'ioredis'])
        if (!(await installed(name)))
          return `the package ${name} is not installed (a devDependency of @weft/bench: run npm ci)`;
      try {
        await redisInfo(env.redisUrl);
        return null;
      } catch (e) {
        return `no Redis answered at ${shownUrl(env.redisUrl)} (${(e as Error).message}): start redis-server or set REDIS_URL`;
      }
    },
    async settings() {
      const info = await redisInfo(env.redisUrl);
      return {
        version: `bullmq ${await installed('bullmq')}, ioredis ${await installed('ioredis')}, Redis ${info.version}`,
        processes: `${env.workers} worker processes, one Worker each; the bench process adds flows`,
        concurrency: `Worker concurrency ${env.concurrency}`,
        pool: 'one ioredis connection per process, and the blocking ones BullMQ duplicates',
        durability: `Redis persistence: appendonly=${info.appendonly}, appendfsync=${info.appendfsync}, save="${info.save}"`,
      };
    },
    run: (workload) => runBullmq(env, workload, `weft-bench-${process.pid}-${++round}`),
  };
}

interface RedisInfo {
  version: string;
  appendonly: string;
  appendfsync: string;
  save: string;
}

/** Redis's version and persistence settings (`unknown` where CONFIG is not allowed); throws when none answers. */
async function redisInfo(url: string): Promise<RedisInfo> {
  const { Redis } = await import('ioredis');
  const redis = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 2000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  redis.on('error', () => {});
  try {
    await redis.connect();
    const server = await redis.info('server');
    const config = async (key: string) => {
      try {
        const pair = (await redis.config('GET', key)) as string[];
        return pair[1] ?? 'unknown';
      } catch {
        return 'unknown';
      }
    };
    return {
      version: /redis_version:(\S+)/.exec(server)?.[1] ?? 'unknown',
      appendonly: await config('appendonly'),
      appendfsync: await config('appendfsync'),
      save: await config('save'),
    };
  } finally {
    redis.disconnect();
  }
}

async function runBullmq(env: PeerEnv, workload: Workload, prefix: string): Promise<PeerRun> {
  const { FlowProducer, Queue, QueueEvents } = await import('bullmq');
  const { Redis } = await import('ioredis');
  const segments = segmentsOf(layersOf(workload));
  const connection = new Redis(env.redisUrl, { maxRetriesPerRequest: null });
  // The events stream is long enough to hold every event of the burst, so that none is trimmed unread.
  const warm = warmUpBursts(env, workload);
  const maxLen = 20 * (workload.runs + warm.reduce((a, b) => a + b, 0)) * workload.steps;
  const queue = new Queue(QUEUE, { connection, prefix, streams: { events: { maxLen } } });
  const flows = new FlowProducer({ connection, prefix });
  const events = new QueueEvents(QUEUE, { connection, prefix });
  const workers: ChildProcess[] = [];
  const last = lastNode(segments);
  try {
    await queue.waitUntilReady();
    await events.waitUntilReady();
    for (let i = 0; i < env.workers; i++) workers.push(await startWorker(env, prefix, segments));
    let batch = 0;
    const burst = async (runs: number): Promise<{ startedAt: number; endedAt: number }> => {
      const tag = `b${++batch}`;
      const ends = new Set(Array.from({ length: runs }, (_, i) => jobId(`${tag}r${i}`, last)));
      let seen = 0;
      let next = 0;
      const done = new Promise<number>((resolve) => {
        events.on('completed', ({ jobId: id }) => {
          if (ends.delete(id) && ++seen === runs) resolve(nowMs());
        });
      });
      const startedAt = nowMs();
      await inLanes(runs, 100, async (size) => {
        const first = next;
        next += size;
        await flows.addBulk(
          Array.from({ length: size }, (_, i) => segmentFlow(`${tag}r${first + i}`, segments, 0)),
        );
      });
      const endedAt = await done;
      events.removeAllListeners('completed');
      return { startedAt, endedAt };
    };
    for (const runs of warm) await burst(runs);
    await counts(workers);
    const { startedAt, endedAt } = await burst(workload.runs);
    const steps = (await counts(workers)).reduce((a, b) => a + b, 0);
    return { runs: workload.runs, steps, wallMs: endedAt - startedAt };
  } finally {
    await Promise.all(workers.map(stopWorker));
    await events.close();
    await flows.close();
    await queue.obliterate({ force: true }).catch(() => {});
    await queue.close();
    connection.disconnect();
  }
}

async function startWorker(env: PeerEnv, prefix: string, segments: string[][][]): Promise<ChildProcess> {
  const child = fork(WORKER, [], {
    env: {
      ...process.env,
      REDIS_URL: env.redisUrl,
      WEFT_PEER_PREFIX: prefix,
      WEFT_PEER_SEGMENTS: JSON.stringify(segments),
      WEFT_PEER_CONCURRENCY: String(env.concurrency),
    },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  await new Promise<void>((resolve, reject) => {
    child.once('message', () => resolve());
    child.once('exit', (code) => reject(new Error(`a BullMQ worker process exited with code ${code}`)));
  });
  return child;
}

/** The jobs each worker process has run since it was last asked (the count starts again at 0). */
function counts(workers: readonly ChildProcess[]): Promise<number[]> {
  return Promise.all(
    workers.map(
      (w) =>
        new Promise<number>((resolve) => {
          w.once('message', (m: { processed: number }) => resolve(m.processed));
          w.send({ cmd: 'count' });
        }),
    ),
  );
}

async function stopWorker(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.send({ cmd: 'stop' });
  await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
  if (child.exitCode === null) child.kill('SIGKILL');
}
