// The example worker for order-fulfilment.yaml. Run it against a Weft server:
//   WEFT_URL=http://127.0.0.1:8080 node examples/order-worker.mjs
// The payment handler fails one time in ten, like a flaky bank; Weft retries it.
import { randomUUID } from 'node:crypto';
import { TerminalError, Worker } from '@weft/worker';

const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const jitter = (min, max) => pause(min + Math.random() * (max - min));

const worker = new Worker({
  url: process.env.WEFT_URL ?? 'http://127.0.0.1:8080',
  concurrency: Number(process.env.WEFT_CONCURRENCY ?? 50),
  handlers: {
    'orders.validate': async ({ order }) => {
      await jitter(1, 5);
      if (order.items.some((item) => item.qty > 100))
        throw new TerminalError('an order may not ask for more than 100 of one item');
      return { valid: true };
    },
    'inventory.reserve': async ({ items }) => {
      await jitter(2, 10);
      return { reservation_id: `res_${randomUUID().slice(0, 8)}`, lines: items.length };
    },
    'payments.charge': async ({ amount }, ctx) => {
      await jitter(5, 20);
      if (Math.random() < 0.1) throw new Error('bank timeout (simulated)');
      // A real bank gets ctx.idempotencyKey as its idempotency key: the same on every attempt of this
      // step, so a retry after a timeout is recognised and never charged twice. Here it names the payment.
      return { payment_id: `pay_${ctx.idempotencyKey.slice(0, 8)}`, charged: amount };
    },
    'shipping.dispatch': async ({ order_id }) => {
      await jitter(2, 10);
      return { tracking: `TRK-${order_id}` };
    },
    'mail.send': async ({ to, template }) => {
      await jitter(1, 5);
      return { sent: true, to, template };
    },
  },
  onProblem: (message) => console.error(`worker: ${message}`),
});

await worker.start();
const stop = async () => {
  await worker.stop();
  process.exit(0);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
