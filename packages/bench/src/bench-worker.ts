// A benchmark worker process: no-op handlers over the real worker protocol, recording when each handler
// starts and ends (wall-clock milliseconds, microsecond precision) and sending the records to the parent
// over IPC as they come (see TimingFeed).
import { Worker } from '@weft/worker';
import { now, TimingFeed } from './timing-feed.js';

// `flushed` marks the answer to the parent's `dump`.
const feed = new TimingFeed((timings) => process.send?.({ timings, flushed: false }));

const worker = new Worker({
  url: process.env.WEFT_URL!,
  name: process.env.WEFT_WORKER_NAME,
  concurrency: Number(process.env.WEFT_CONCURRENCY ?? 64),
  pollWaitMs: 5000,
  handlers: {
    'bench.noop': (_input, ctx) => {
      feed.record(ctx.runId, ctx.nodeId, ctx.iteration, now());
      return null;
    },
  },
});

process.on('message', (message: { cmd: string }) => {
  if (message.cmd === 'dump') {
    process.send?.({ timings: feed.take(), flushed: true });
  } else if (message.cmd === 'stop') {
    void worker.stop().then(() => process.exit(0));
  }
});

await worker.start();
process.send?.({ ready: true });
