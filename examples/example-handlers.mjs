// Task handlers for every task type of the example definitions in this folder, used by
// examples/nodes-worker.mjs and by the examples' test. Ids are derived from the input, as an idempotent
// handler's would be: running a step twice gives the same answer.
// Nodes of other kinds (switch, wait, wait_for_event, loop, map, transform, terminate, noop, human,
// sub_workflow, start_workflow, event, http) need no worker.

/** Handlers by task type. @type {Record<string, import('@weft/worker').Handler>} */
export const handlers = {
  // order-fulfilment.yaml
  'orders.validate': async ({ order }) => ({ valid: order.items.every((item) => item.qty <= 100) }),
  'inventory.reserve': async ({ order_id, items }) => ({
    reservation_id: `res-${order_id}`,
    lines: items.length,
  }),
  'payments.charge': async ({ order_id, amount }) => ({ payment_id: `pay-${order_id}`, charged: amount }),
  'shipping.dispatch': async ({ order_id }) => ({ tracking: `TRK-${order_id}` }),
  'mail.send': async ({ to, template }) => ({ sent: true, to: to ?? null, template }),
  // order-routing.yaml
  'orders.gift_wrap': async ({ order_id }) => ({ wrapped: order_id }),
  'orders.ship': async ({ order_id, speed }) => ({ tracking: `TRK-${order_id}`, speed }),
  'orders.confirm': async ({ order_id, total }) => ({ confirmation: `conf-${order_id}`, order_id, total }),
  // expense-approval.yaml
  'expenses.submit': async ({ expense_id }) => ({ submitted: expense_id }),
  'expenses.pay': async ({ expense_id, amount, approved_by }) => ({
    payment_id: `pay-${expense_id}`,
    amount,
    approved_by,
  }),
  // report-export.yaml: ready on the third check, like an export that takes a few seconds.
  'reports.request': async ({ report }) => ({ export_id: `exp-${report ?? 'report'}` }),
  'reports.status': async ({ export_id, pass }) =>
    pass >= 2
      ? { status: 'ready', url: `https://files.example.com/${export_id}.csv` }
      : { status: 'pending' },
  'reports.download': async ({ url, checks }) => ({ downloaded: url, checks }),
  // shipment-quotes.yaml: carrier A is quick; carrier B takes its time.
  'quotes.carrier_a': async ({ weight }) => ({ carrier: 'A', price: 5 + weight * 2 }),
  'quotes.carrier_b': async ({ weight }) => {
    await new Promise((resolve) => setTimeout(resolve, 300));
    return { carrier: 'B', price: 4 + weight * 2 };
  },
  // invoice-batch.yaml
  'invoices.create': async ({ customer, position }) => ({
    invoice_id: `inv-${position}`,
    customer: customer.name ?? customer,
    amount: customer.amount ?? 10,
    position,
  }),
  // refund-approval.yaml
  'payments.refund': async ({ order_id, amount }) => ({ refund_id: `ref-${order_id}`, amount }),
  // payment.yaml (run by checkout.yaml as a sub_workflow)
  'payments.authorize': async ({ order_id, amount }) => ({ authorization_id: `auth-${order_id}`, amount }),
  'payments.capture': async ({ authorization }) => ({
    payment_id: `pay-${authorization.slice('auth-'.length)}`,
  }),
  // signup.yaml
  'accounts.create': async ({ email }) => ({ account_id: `acct-${email}` }),
  // address-check.yaml
  'shipping.label': async ({ order_id, address }) => ({ label_id: `lbl-${order_id}`, to: address }),
};
