import type { Json } from '@weft/core';
import { TEST_ADMIN_KEY } from '@weft/testing';
import { Worker } from '@weft/worker';

/** Definitions the browser tests deploy. */
export const ORDER = `name: order
description: Reserve, charge, ship.
nodes:
  - { id: reserve, task_type: shop.reserve }
  - { id: charge, task_type: shop.charge, input: { amount: input.amount } }
  - { id: notify, task_type: shop.notify }
  - { id: ship, task_type: shop.ship }
edges:
  - { from: reserve, to: [charge, notify] }
  - { from: charge, to: ship }
  - { from: notify, to: ship }
`;

export const APPROVAL = `name: refund-approval
nodes:
  - id: approve
    kind: human
    title: Approve the refund
    form:
      type: object
      required: [approved, note]
      properties:
        approved: { type: boolean, title: Approved }
        note: { type: string, title: Note, minLength: 3 }
  - { id: pay, task_type: shop.refund }
edges:
  - { from: approve, to: pay }
`;

export const AUDITED = `name: audited
nodes:
  - { id: record, kind: event, sink: audit, payload: { order: input.order } }
`;

export const WAITING = `name: waiting
nodes:
  - { id: hold, kind: wait, duration: 1h }
  - { id: after, task_type: shop.after }
edges:
  - { from: hold, to: after }
`;

/** A worker for the shop task types, over HTTP like any worker; `gate` holds tasks until opened. */
export function shopWorker(url: string): { worker: Worker; open: () => void } {
  let release: () => void = () => {};
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const handler = async (input: Json) => {
    await gate;
    return { ok: true, input };
  };
  const worker = new Worker({
    url,
    apiKey: TEST_ADMIN_KEY,
    concurrency: 4,
    name: 'console-test-worker',
    handlers: {
      'shop.reserve': handler,
      'shop.charge': handler,
      'shop.notify': handler,
      'shop.ship': handler,
      'shop.refund': handler,
      'shop.after': handler,
    },
  });
  return { worker, open: release };
}

export const DECISION = `name: decision
nodes:
  - { id: ask, task_type: shop.ask }
  - { id: decide, kind: wait_for_event, event: decision, timeout: 2d }
edges:
  - { from: ask, to: decide }
`;

/** A loop of three passes and a map of three items, run by the engine alone (no worker needed). */
export const NESTED = `name: nested
nodes:
  - id: poll
    kind: loop
    max_iterations: 5
    while: "nodes.check.output.pass < 2"
    body:
      nodes:
        - { id: check, kind: transform, value: { pass: index } }
  - id: each
    kind: map
    items: "['a', 'b', 'c']"
    body:
      nodes:
        - { id: price, kind: transform, value: { item: item, position: index } }
  - { id: child, kind: sub_workflow, definition: leaf }
edges:
  - { from: poll, to: each }
  - { from: each, to: child }
`;

/** The child run's definition: one transform. */
export const LEAF = `name: leaf
nodes:
  - { id: answer, kind: transform, value: { leaf: true } }
`;
