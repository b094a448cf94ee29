// A BullMQ worker process for the peer benchmark: one Worker with a concurrency, no-op steps. The root of
// a segment of a run (see bullmq-flows.ts) adds the next segment's flow once its own step is done.
import { FlowProducer, type Job, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { QUEUE, segmentFlow } from './bullmq-flows.js';

const segments: string[][][] = JSON.parse(process.env.WEFT_PEER_SEGMENTS!);
const prefix = process.env.WEFT_PEER_PREFIX!;
const connection = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: null });
const flows = new FlowProducer({ connection, prefix });
let processed = 0;

const worker = new Worker(
  QUEUE,
  async (job: Job<{ run: string; segment: number }>) => {
    processed++;
    const { run, segment } = job.data;
    const root = segments[segment]!.at(-1)![0];
    if (job.name === root && segment + 1 < segments.length)
      await flows.add(segmentFlow(run, segments, segment + 1));
    return null;
  },
  { connection, prefix, concurrency: Number(process.env.WEFT_PEER_CONCURRENCY) },
);
worker.on('error', (e) => process.stderr.write(`BullMQ worker: ${e.message}\n`));

process.on('message', (m: { cmd: 'count' | 'stop' }) => {
  if (m.cmd === 'count') {
    process.send?.({ processed });
    processed = 0;
  } else {
    void Promise.all([worker.close(), flows.close()])
      .then(() => connection.quit())
      .finally(() => process.exit(0));
  }
});

await worker.waitUntilReady();
process.send?.({ ready: true });
