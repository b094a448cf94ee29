// A benchmark worker process: no-op handlers over the real worker protocol, recording when each handler
// starts and ends (wall-clock milliseconds, microsecond precision) for the parent to collect over IPC.
import { Worker } from '@weft/worker';

const timings: [string, string, number, number][] = [];
const now = () => performance.timeOrigin + performance.now();

const worker = new Worker({
  url: process.env.WEFT_URL!,
  name: process.env.WEFT_WORKER_NAME,
  concurrency: Number(process.env.WEFT_CONCURRENCY ?? 64),
  pollWaitMs: 5000,
  handlers: {
    'bench.noop': (_input, ctx) => {
      const start = now();
      // A map item or loop pass is its own step: `node[iteration]`, as the engine names it.
      const node = ctx.iteration ? `${ctx.nodeId}[${ctx.iteration}]` : ctx.nodeId;
      timings.push([ctx.runId, node, start, now()]);
      return null;
    },
  },
});

process.on('message', (message: { cmd: string }) => {
  if (message.cmd === 'dump') {
    process.send?.({ timings: timings.splice(0) });
  } else if (message.cmd === 'stop') {
    void worker.stop().then(() => process.exit(0));
  }
});

await worker.start();
process.send?.({ ready: true });
