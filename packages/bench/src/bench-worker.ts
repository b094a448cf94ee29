// A benchmark worker process: no-op handlers over the real worker protocol, recording when each handler
// starts and ends (wall-clock milliseconds, microsecond precision) and sending them to the parent over IPC
// every SEND_MS: the records are the benchmark's, and kept here through a phase they would count in the
// worker's memory (tens of thousands in a paced phase of W4, which raised its peak by about 15 MB).
import { Worker } from '@weft/worker';

let timings: [string, string, number, number][] = [];
const SEND_MS = 50;
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

/** Sends the records kept since the last send; `flushed` answers the parent's `dump`. */
function send(flushed: boolean): void {
  if (timings.length === 0 && !flushed) return;
  process.send?.({ timings, flushed });
  timings = [];
}
setInterval(() => send(false), SEND_MS).unref();

process.on('message', (message: { cmd: string }) => {
  if (message.cmd === 'dump') {
    send(true);
  } else if (message.cmd === 'stop') {
    void worker.stop().then(() => process.exit(0));
  }
});

await worker.start();
process.send?.({ ready: true });
