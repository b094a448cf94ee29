import type { WeftClient } from '@weft/client';

const run = '0190aaaa-0000-7000-8000-000000000001';
const taskId = '0190aaaa-0000-7000-8000-000000000002';
const task = {
  run_id: run,
  task_id: taskId,
  attempt: 1,
  lease_token: '0190aaaa-0000-7000-8000-000000000003',
};
const asking = { by: 'ann', reason: 'because' };
const filter = {
  status: 'running',
  definition: 'order',
  version: 2,
  started_before: '2026-01-02T00:00:00Z',
  started_after: '2026-01-01T00:00:00Z',
  run_id: '0190',
  idempotency_key: 'k',
  attr: 'customer:42',
} as const;

/** Drains a live stream's first request, then stops it. */
async function firstOf(stream: AsyncGenerator<unknown>, abort: AbortController): Promise<void> {
  setTimeout(() => abort.abort(), 50);
  for await (const _ of stream) break;
}

/**
 * One call of every public method of the client, with every optional field it can send filled in, so
 * that each field is checked against the OpenAPI document.
 */
export const clientCalls: Record<string, (c: WeftClient) => Promise<unknown>> = {
  deploy: (c) => c.deploy('name: x\nnodes: []\n'),
  validate: (c) => c.validate('name: x\nnodes: []\n'),
  listDefinitions: (c) => c.listDefinitions(),
  getDefinition: (c) => c.getDefinition('order'),
  getDefinitionVersion: (c) => c.getDefinitionVersion('order', 2),
  startRun: (c) =>
    c.startRun(
      'order',
      { n: 1 },
      { version: 2, idempotencyKey: 'k', onDuplicate: 'error', attributes: { customer: 42 } },
    ),
  startAndWait: (c) =>
    c.startAndWait('order', { n: 1 }, { version: 2, idempotencyKey: 'k', timeoutMs: 5000 }),
  result: (c) => c.result(run, { timeoutMs: 5000 }),
  startRuns: (c) => c.startRuns('order', [{ n: 1 }, { n: 2 }], { version: 2 }),
  getRun: (c) => c.getRun(run),
  listRuns: (c) =>
    c.listRuns({ ...filter, status: 'running', cursor: 'abc', limit: 10, include: ['input', 'output'] }),
  countRuns: (c) => c.countRuns(filter),
  listNamespaces: (c) => c.listNamespaces(),
  listWorkers: (c) => c.listWorkers(60_000),
  outboxBacklog: (c) => c.outboxBacklog(),
  cancelRun: (c) => c.cancelRun(run, 'no longer needed', 'ann'),
  pauseRun: (c) => c.pauseRun(run, asking),
  resumeRun: (c) => c.resumeRun(run, asking),
  terminateRun: (c) => c.terminateRun(run, 'stuck', 'ann'),
  retryRun: (c) => c.retryRun(run, asking),
  rerunRun: (c) => c.rerunRun(run, 'charge', { ...asking, iteration: '' }),
  skipTask: (c) => c.skipTask(run, 'charge', { ...asking, iteration: '', output: { skipped: true } }),
  completeTask: (c) => c.completeTask(run, 'charge', { ok: true }, { ...asking, iteration: '' }),
  failTask: (c) =>
    c.failTask(
      run,
      'charge',
      { message: 'no', retryable: false, details: { a: 1 } },
      { ...asking, iteration: '' },
    ),
  bulk: (c) =>
    c.bulk(
      'cancel',
      { definition: 'order', version: 2, status: 'running', started_before: filter.started_before },
      { ...asking, batch_size: 10, cursor: 'abc', dry_run: true },
    ),
  forkRun: (c) => c.forkRun(run, { input: { n: 1 }, version: 2, up_to_node: 'charge', by: 'ann' }),
  forks: (c) => c.forks(run),
  planMove: (c) =>
    c.planMove({
      definition: 'order',
      to_version: 2,
      node_map: { charge: 'charge_card' },
      from_version: 1,
      status: 'running',
      limit: 10,
      cursor: run,
    }),
  moveRuns: (c) =>
    c.moveRuns({
      definition: 'order',
      to_version: 2,
      node_map: { charge: 'charge_card' },
      run_ids: [run],
      ...asking,
    }),
  streamHistory: (c) => {
    const abort = new AbortController();
    return firstOf(c.streamHistory(run, { after: 3, signal: abort.signal }), abort);
  },
  emit: (c) => c.emit('order.placed', { id: 'A1' }, { id: 'ev-1' }),
  signal: (c) => c.signal(run, 'approved', { by: 'ann' }, { correlation: 'order-1', by: 'ann' }),
  history: (c) => c.history(run, 3, 50),
  poll: (c) => c.poll('w1', ['a.b'], 5, 1000),
  heartbeat: (c) => c.heartbeat('w1', [task]),
  report: (c) =>
    c.report(
      'w1',
      [
        { ...task, node_id: 'a', iteration: '', output: { ok: true } },
        { ...task, error: { message: 'no', retryable: false, type: 'Error', stack: 's', details: { a: 1 } } },
      ],
      { taskTypes: ['a.b'], max: 3 },
    ),
  dispatchInfo: (c) => c.dispatchInfo(),
  leaseById: (c) => c.leaseById('w1', ['a.b'], [{ run_id: run, task_id: taskId, attempt: 1 }]),
  listLimits: (c) => c.listLimits(),
  setLimit: async (c) => {
    await c.setLimit('rate', 'payments.charge', 10, '1m');
    await c.setLimit('quota', '', 100);
  },
  deleteLimit: async (c) => {
    await c.deleteLimit('concurrency', 'payments.charge');
    await c.deleteLimit('quota', '');
  },
  inbox: (c) => c.inbox({ state: 'open', assignee: 'ann', claimed_by: 'bob', run_id: run, limit: 5 }),
  humanTask: (c) => c.humanTask('h1'),
  claimHumanTask: (c) => c.claimHumanTask('h1', 'ann'),
  releaseHumanTask: (c) => c.releaseHumanTask('h1', 'ann'),
  completeHumanTask: (c) => c.completeHumanTask('h1', 'ann', { approved: true }),
  putSchedule: (c) =>
    c.putSchedule('nightly', {
      definition: 'order',
      cron: '0 3 * * *',
      version: 2,
      timezone: 'Europe/Paris',
      input: { n: 1 },
      overlap: 'skip',
      paused: false,
    }),
  listSchedules: (c) => c.listSchedules(),
  getSchedule: (c) => c.getSchedule('nightly'),
  pauseSchedule: async (c) => {
    await c.pauseSchedule('nightly', true);
    await c.pauseSchedule('nightly', false);
  },
  deleteSchedule: (c) => c.deleteSchedule('nightly'),
  sweeper: (c) => c.sweeper(),
  sweep: (c) => c.sweep(60_000),
  sweeperRepairs: (c) => c.sweeperRepairs({ moved: false, limit: 5 }),
  listDeadLetters: (c) => c.listDeadLetters({ destination: 'billing', cursor: 'abc', limit: 5 }),
  replayDeadLetters: async (c) => {
    await c.replayDeadLetters({ ids: ['17'] });
    await c.replayDeadLetters({ destination: 'billing' });
  },
};
