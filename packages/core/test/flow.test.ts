import {
  checkDefinition,
  type Definition,
  defineStep,
  defineWorkflow,
  definitionHash,
  inputOf,
  outputOf,
  parseDefinition,
  text,
} from '@weft/core';
import { describe, expect, expectTypeOf, it } from 'vitest';

const reserve = defineStep<{ sku: string; qty: number }, { reservation: string }>('inventory.reserve');
const release = defineStep<{ reservation: string }, null>('inventory.release', {
  retry: { maxAttempts: 10 },
});
const charge = defineStep<{ amount: number }, { payment_id: string }>('payments.charge', {
  retry: { maxAttempts: 6, backoff: 'exponential', delay: '100ms', maxDelay: '2s' },
  timeout: '30s',
});
const refund = defineStep<{ payment_id: string }, null>('payments.refund');
const pack = defineStep('warehouse.pack');
const notify = defineStep('mail.send');

const code = defineWorkflow<{ amount: number; items: { sku: string; qty: number }[] }, { paid: string }>(
  'order',
)
  .describe('Reserve, charge, pack every item, wait for pickup, ship.')
  .inputSchema({ type: 'object', required: ['amount', 'items'] })
  .defaults({ retry: { maxAttempts: 3, delay: '200ms', maxDelay: '5s' }, timeout: '1m' })
  .task('reserve', reserve, {
    input: { sku: 'input.items[0].sku', qty: 'input.items[0].qty' },
    compensate: { step: release, input: { reservation: outputOf('reserve', 'reservation') } },
  })
  .task('charge', charge, {
    after: ['reserve'],
    input: { amount: inputOf('amount') },
    compensate: { step: refund, timeout: 10_000 },
  })
  .map('pack_all', {
    after: ['charge'],
    items: 'input.items',
    concurrency: 4,
    body: (b) =>
      b
        .task('pack', pack, { input: { sku: 'item.sku' } })
        .task('label', pack, { after: ['pack'], retry: { maxAttempts: 1 } })
        .output({ sku: 'item.sku', label: outputOf('label') }),
  })
  .wait('cool_off', { after: ['pack_all'], duration: '10m' })
  .waitForEvent('pickup', {
    after: ['cool_off'],
    event: 'picked_up',
    correlation: 'input.order',
    timeout: '2d',
  })
  .task('chase', notify, { after: [{ from: 'pickup', on: 'timeout' }], input: { template: text('late') } })
  .switch('route', { after: ['pickup'], expression: 'input.amount > 100' })
  .subWorkflow('insure', { after: [{ from: 'route', case: true }], workflow: 'insurance', timeout: '1h' })
  .noop('skip', { after: [{ from: 'route', default: true }] })
  .task('ship', notify, { after: ['insure', 'skip'], join: 'any', priority: 5 })
  .loop('track', {
    after: ['ship'],
    while: "nodes.poll.output.state != 'delivered'",
    maxIterations: 10,
    body: (b) => b.task('poll', notify).wait('pause', { after: ['poll'], duration: '1h' }),
  })
  .http('confirm', {
    after: ['track'],
    url: "'https://example.com/hook'",
    method: 'POST',
    body: { done: true },
    success: [200, '3xx'],
  })
  .event('announce', {
    after: ['confirm'],
    sink: 'events',
    topic: 'orders.done',
    payload: { paid: outputOf('charge', 'payment_id') },
  })
  .startWorkflow('survey', { after: ['announce'], workflow: 'survey', input: { who: inputOf('email') } })
  .terminate('done', {
    after: ['survey'],
    status: 'completed',
    output: { paid: outputOf('charge', 'payment_id') },
  })
  .output({ paid: outputOf('charge', 'payment_id') })
  .build();

const yamlTwin = `
name: order
description: Reserve, charge, pack every item, wait for pickup, ship.
input_schema: { type: object, required: [amount, items] }
defaults:
  retry: { max_attempts: 3, delay: 200ms, max_delay: 5s }
  timeout: 1m
nodes:
  - id: reserve
    task_type: inventory.reserve
    input: { sku: "input.items[0].sku", qty: "input.items[0].qty" }
    compensate:
      task_type: inventory.release
      input: { reservation: nodes.reserve.output.reservation }
      retry: { max_attempts: 10 }
  - id: charge
    task_type: payments.charge
    input: { amount: input.amount }
    retry: { max_attempts: 6, backoff: exponential, delay: 100ms, max_delay: 2s }
    timeout: 30s
    compensate: { task_type: payments.refund, timeout: 10s }
  - id: pack_all
    kind: map
    items: input.items
    concurrency: 4
    body:
      nodes:
        - { id: pack, task_type: warehouse.pack, input: { sku: item.sku } }
        - { id: label, task_type: warehouse.pack, retry: { max_attempts: 1 } }
      edges: [{ from: pack, to: label }]
      output: { sku: item.sku, label: nodes.label.output }
  - { id: cool_off, kind: wait, duration: 10m }
  - { id: pickup, kind: wait_for_event, event: picked_up, correlation: input.order, timeout: 2d }
  - { id: chase, task_type: mail.send, input: { template: '"late"' } }
  - { id: route, kind: switch, expression: input.amount > 100 }
  - { id: insure, kind: sub_workflow, definition: insurance, timeout: 1h }
  - { id: skip, kind: noop }
  - { id: ship, task_type: mail.send, join: any, priority: 5 }
  - id: track
    kind: loop
    while: nodes.poll.output.state != 'delivered'
    max_iterations: 10
    body:
      nodes:
        - { id: poll, task_type: mail.send }
        - { id: pause, kind: wait, duration: 1h }
      edges: [{ from: poll, to: pause }]
  - { id: confirm, kind: http, url: "'https://example.com/hook'", method: POST, body: { done: true }, success: [200, 3xx] }
  - { id: announce, kind: event, sink: events, topic: orders.done, payload: { paid: nodes.charge.output.payment_id } }
  - { id: survey, kind: start_workflow, definition: survey, input: { who: input.email } }
  - { id: done, kind: terminate, status: completed, output: { paid: nodes.charge.output.payment_id } }
edges:
  - { from: reserve, to: charge }
  - { from: charge, to: pack_all }
  - { from: pack_all, to: cool_off }
  - { from: cool_off, to: pickup }
  - { from: pickup, to: chase, on: timeout }
  - { from: pickup, to: route }
  - { from: route, to: insure, case: true }
  - { from: route, to: skip, default: true }
  - { from: insure, to: ship }
  - { from: skip, to: ship }
  - { from: ship, to: track }
  - { from: track, to: confirm }
  - { from: confirm, to: announce }
  - { from: announce, to: survey }
  - { from: survey, to: done }
output: { paid: nodes.charge.output.payment_id }
`;

/** A definition without source line numbers (the only thing that differs between two sources). */
function withoutLines(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutLines);
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value)
        .filter(([k]) => k !== 'line')
        .map(([k, v]) => [k, withoutLines(v)]),
    );
  return value;
}

describe('code-first workflows', () => {
  it('produce the same definition as their YAML twin', () => {
    const twin = parseDefinition(yamlTwin);
    if (!twin.ok) throw new Error(twin.error.map((p) => p.message).join('\n'));
    expect(withoutLines(code.definition)).toEqual(withoutLines(twin.value));
    expect(definitionHash(code.definition)).toBe(definitionHash(twin.value));
    const chargeNode = code.definition.nodes.find((n) => n.id === 'charge');
    expect(chargeNode).toMatchObject({
      retry: { maxAttempts: 6, delayMs: 100, maxDelayMs: 2000 },
      timeoutMs: 30_000,
      compensate: { taskType: 'payments.refund', timeoutMs: 10_000 },
    });
  });

  it('print YAML that parses back to the same definition', () => {
    const again = parseDefinition(code.yaml);
    expect(again.ok).toBe(true);
    if (again.ok) expect(again.value).toEqual(code.definition);
    expect(code.yaml).toContain('task_type: payments.charge');
  });

  it('carry the types of their steps and runs', () => {
    expectTypeOf(code.__input).toEqualTypeOf<
      { amount: number; items: { sku: string; qty: number }[] } | undefined
    >();
    expectTypeOf(charge.__output).toEqualTypeOf<{ payment_id: string } | undefined>();
  });

  it('list every problem at once: duplicates, unknown and self dependencies, cycles', () => {
    const step = defineStep('t');
    const result = defineWorkflow('broken')
      .task('a', step, { after: ['c'] })
      .task('a', step)
      .task('b', step, { after: ['b', 'nowhere'] })
      .task('c', step, { after: ['d'] })
      .task('d', step, { after: ['c'] })
      .check();
    expect(result.ok).toBe(false);
    if (result.ok) return;
    const messages = result.error.map((p) => p.message).join('\n');
    expect(messages).toContain('node id "a" is used twice');
    expect(messages).toContain('edge b -> b points at its own node');
    expect(messages).toContain('there is no node "nowhere"');
    expect(messages).toContain('the graph has a cycle');
    expect(() => defineWorkflow('broken').build()).toThrow(/the graph is empty/);
  });
});

describe('checkDefinition', () => {
  const parsed = parseDefinition(yamlTwin);
  const definition = (parsed.ok ? parsed.value : null) as Definition;

  it('is ok for a valid definition, and names each task type no handler runs', () => {
    expect(checkDefinition(definition)).toEqual({ ok: true, value: definition });
    const some = new Set(['inventory.reserve', 'payments.charge', 'warehouse.pack', 'mail.send']);
    const result = checkDefinition(definition, { taskTypes: some });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error.code).toBe('invalid_definition');
    expect(result.error.problems.map((p) => p.message)).toEqual([
      'compensate.task_type: no handler is registered for task type "inventory.release"; register one, or remove the node',
      'compensate.task_type: no handler is registered for task type "payments.refund"; register one, or remove the node',
    ]);
  });

  it('refuses an empty graph', () => {
    const result = checkDefinition({ ...definition, nodes: [], edges: [], output: null });
    expect(result).toMatchObject({
      ok: false,
      error: { problems: [{ message: expect.stringContaining('empty') }] },
    });
  });
});
