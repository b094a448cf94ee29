import { readFileSync } from 'node:fs';
import type { Json } from '@weft/core';
import type { Engine, LeasedTask, RunRecord } from '@weft/engine';
import { completed, eventually } from './helpers.js';

/** The text of an example definition under examples/. */
export function example(name: string): string {
  return readFileSync(new URL(`../../../examples/${name}`, import.meta.url), 'utf8');
}

/** What the task handlers of examples/nodes-worker.mjs return, for tests that work example runs. */
export function exampleHandler(task: LeasedTask): Json {
  const input = (task.input ?? {}) as Record<string, Json>;
  switch (task.taskType) {
    case 'orders.gift_wrap':
      return { wrapped: input.order_id ?? null };
    case 'orders.ship':
      return { tracking: `TRK-${input.order_id}`, speed: input.speed ?? null };
    case 'orders.confirm':
      return { confirmation: `conf-${input.order_id}`, total: input.total ?? null };
    case 'expenses.submit':
      return { submitted: input.expense_id ?? null };
    case 'expenses.pay':
      return { payment_id: `pay-${input.expense_id}`, approved_by: input.approved_by ?? null };
    case 'mail.send':
      return { sent: true, template: input.template ?? null };
    case 'reports.request':
      return { export_id: 'exp-1' };
    case 'reports.status':
      return (input.pass as number) >= 2
        ? { status: 'ready', url: 'https://files/exp-1.csv' }
        : { status: 'pending' };
    case 'reports.download':
      return { downloaded: input.url ?? null, checks: input.checks ?? null };
    case 'quotes.carrier_a':
      return { carrier: 'A', price: 5 + (input.weight as number) * 2 };
    case 'quotes.carrier_b':
      return { carrier: 'B', price: 4 + (input.weight as number) * 2 };
    case 'invoices.create': {
      const customer = input.customer as { name: string; amount: number };
      return { customer: customer.name, amount: customer.amount, position: input.position ?? null };
    }
    default:
      throw new Error(`no example handler for ${task.taskType}`);
  }
}

/** Every task type the examples use. */
export const EXAMPLE_TYPES = [
  'orders.gift_wrap',
  'orders.ship',
  'orders.confirm',
  'expenses.submit',
  'expenses.pay',
  'mail.send',
  'reports.request',
  'reports.status',
  'reports.download',
  'invoices.create',
  'quotes.carrier_a',
  'quotes.carrier_b',
];

/** Works example tasks until the run leaves `running`; returns the finished run. */
export async function workUntilDone(engine: Engine, runId: string, ms = 20_000): Promise<RunRecord> {
  const until = Date.now() + ms;
  for (;;) {
    const run = await engine.runs.get(runId);
    if (run.status !== 'running') return run;
    if (Date.now() > until) throw new Error(`run ${runId} still running after ${ms} ms`);
    const tasks = await engine.tasks.poll({
      namespace: 'default',
      worker: 'examples',
      taskTypes: EXAMPLE_TYPES,
      max: 20,
      waitMs: 50,
    });
    if (tasks.length > 0) {
      await engine.tasks.report({
        namespace: 'default',
        worker: 'examples',
        reports: tasks.map((t) => completed(t, exampleHandler(t))),
      });
    }
  }
}

/** Works example tasks until `check` gives a value. */
export async function workUntil<T>(
  engine: Engine,
  check: () => Promise<T | undefined>,
  ms = 20_000,
): Promise<T> {
  return eventually(async () => {
    const tasks = await engine.tasks.poll({
      namespace: 'default',
      worker: 'examples',
      taskTypes: EXAMPLE_TYPES,
      max: 20,
      waitMs: 0,
    });
    if (tasks.length > 0) {
      await engine.tasks.report({
        namespace: 'default',
        worker: 'examples',
        reports: tasks.map((t) => completed(t, exampleHandler(t))),
      });
    }
    return check();
  }, ms);
}
