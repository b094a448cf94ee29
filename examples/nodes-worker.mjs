// The example worker for every definition in this folder (the demo runs order-fulfilment.yaml with
// order-worker.mjs instead, whose payment step fails one time in ten). Run it against a Weft server:
//   WEFT_URL=http://127.0.0.1:8080 node examples/nodes-worker.mjs
// Only task nodes need a worker: the handlers are in example-handlers.mjs.
import { Worker } from '@weft/worker';
import { handlers } from './example-handlers.mjs';

const worker = new Worker({
  url: process.env.WEFT_URL ?? 'http://127.0.0.1:8080',
  concurrency: Number(process.env.WEFT_CONCURRENCY ?? 20),
  handlers,
  onProblem: (message) => console.error(`worker: ${message}`),
});

await worker.start();
console.log('nodes-worker: polling for the example task types');
const stop = async () => {
  await worker.stop();
  process.exit(0);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
