// The example worker for order-routing.yaml, expense-approval.yaml, report-export.yaml,
// invoice-batch.yaml, shipment-quotes.yaml and trial-reminder.yaml. Run it against a Weft server:
//   WEFT_URL=http://127.0.0.1:8080 node examples/nodes-worker.mjs
// Control and wait nodes (switch, wait, wait_for_event, loop, map, transform, terminate) need no worker:
// these handlers are only for the task nodes of those examples.
import { randomUUID } from 'node:crypto';
import { Worker } from '@weft/worker';

const id = (prefix) => `${prefix}_${randomUUID().slice(0, 8)}`;

const worker = new Worker({
  url: process.env.WEFT_URL ?? 'http://127.0.0.1:8080',
  concurrency: Number(process.env.WEFT_CONCURRENCY ?? 20),
  handlers: {
    'orders.gift_wrap': async ({ order_id }) => ({ wrapped: order_id }),
    'orders.ship': async ({ order_id, speed }) => ({ tracking: `TRK-${order_id}`, speed }),
    'orders.confirm': async ({ order_id, total }) => ({ confirmation: id('conf'), order_id, total }),
    'expenses.submit': async ({ expense_id }) => ({ submitted: expense_id }),
    'expenses.pay': async ({ amount, approved_by }) => ({ payment_id: id('pay'), amount, approved_by }),
    'mail.send': async ({ to, template }) => ({ sent: true, to, template }),
    'reports.request': async ({ report }) => ({ export_id: id(`exp_${report ?? 'report'}`) }),
    // Ready on the third check, like an export that takes a few seconds.
    'reports.status': async ({ export_id, pass }) =>
      pass >= 2
        ? { status: 'ready', url: `https://files.example.com/${export_id}.csv` }
        : { status: 'pending' },
    'reports.download': async ({ url, checks }) => ({ downloaded: url, checks }),
    // Carrier A is quick; carrier B takes its time.
    'quotes.carrier_a': async ({ weight }) => ({ carrier: 'A', price: 5 + weight * 2 }),
    'quotes.carrier_b': async ({ weight }) => {
      await new Promise((resolve) => setTimeout(resolve, 300));
      return { carrier: 'B', price: 4 + weight * 2 };
    },
    'invoices.create': async ({ customer, position }) => ({
      invoice_id: id('inv'),
      customer: customer.name ?? customer,
      amount: customer.amount ?? 10,
      position,
    }),
  },
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
