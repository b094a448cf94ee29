import { Engine, type Gate, type GateDecision, type GateRequest } from '@weft/engine';
import { leaseRound } from '@weft/engine/internal';
import { PgStore } from '@weft/postgres';
import { createTestDatabase, ListDispatcher, type TestDatabase } from '@weft/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempBlobs } from '../fleet.js';
import { completed, eventually, lease, work } from '../helpers.js';

// The gate (the engine's `Gate` extension point): asked before every claim, on the table poll path and on
// leases by id. An org-wide cap is one counter shared by every engine, here in one process for the test to
// read.

/** A cap of `max` slots shared by every engine given it; `deferFirst` refusals before anything is admitted. */
class CapGate implements Gate {
  inUse = 0;
  admitted = 0;
  released = 0;
  deferred = 0;
  readonly requests: GateRequest[] = [];
  constructor(
    private readonly max: number,
    private deferFirst = 0,
    private readonly retryAfterMs = 100,
  ) {}
  acquire(request: GateRequest): GateDecision {
    this.requests.push(request);
    if (this.deferFirst > 0 || this.inUse >= this.max) {
      if (this.deferFirst > 0) this.deferFirst--;
      this.deferred++;
      return { kind: 'defer', retryAfterMs: this.retryAfterMs };
    }
    this.inUse++;
    this.admitted++;
    let done = false;
    return {
      kind: 'admit',
      release: () => {
        if (done) throw new Error('released twice');
        done = true;
        this.inUse--;
        this.released++;
      },
    };
  }
}

const ONE = 'name: gated\nnodes:\n  - { id: a, task_type: gated.work }\n';
const CHAIN = `
name: gated-chain
nodes:
  - { id: a, task_type: gated.work }
  - { id: b, task_type: gated.work }
  - { id: c, task_type: gated.work }
edges:
  - { from: a, to: b }
  - { from: b, to: c }
`;

let db: TestDatabase;
const engines: Engine[] = [];
const blobs = tempBlobs();

async function engineWith(gate: Gate, extra: Partial<ConstructorParameters<typeof Engine>[0]> = {}) {
  const engine = new Engine({
    store: new PgStore(db.pool(3)),
    blobs,
    gate,
    config: { backgroundLoops: false, crossProcessWakeups: false, systemTasks: false },
    ...extra,
  });
  await engine.start();
  engines.push(engine);
  return engine;
}

beforeAll(async () => {
  db = await createTestDatabase();
  const setup = new Engine({ store: new PgStore(db.pool(2)), blobs, config: { backgroundLoops: false } });
  await setup.definitions.deploy('default', ONE);
  await setup.definitions.deploy('default', CHAIN);
});
afterAll(async () => {
  for (const e of engines) await e.stop();
  await db?.drop();
});

describe('the gate', () => {
  it('defers a step and later admits it: the run still completes, and every slot is released', async () => {
    const gate = new CapGate(1, 3);
    const engine = await engineWith(gate, {
      config: {
        decidePollMs: 50,
        timerPollMs: 50,
        leasePollMs: 100,
        crossProcessWakeups: false,
        systemTasks: false,
      },
    });
    const run = await engine.runs.start({ namespace: 'default', definition: 'gated-chain', input: {} });
    await work(
      engine,
      ['gated.work'],
      () => 'ok',
      async () => (await engine.runs.get(run.id)).status !== 'running',
    );
    expect((await engine.runs.get(run.id)).status).toBe('completed');
    expect(gate.deferred).toBeGreaterThanOrEqual(3);
    expect(gate.admitted).toBeGreaterThanOrEqual(3);
    expect(gate.inUse).toBe(0);
    expect(gate.released).toBe(gate.admitted);
    // Nothing was handed straight to a worker past the gate: every step was admitted before its claim.
    const tasks = await engine.context.store.listTasks(run.id);
    expect(tasks.filter((t) => t.status === 'completed')).toHaveLength(3);
    // Its background loops would expire other tests' leases before their own reaper does.
    await engine.stop();
  });

  it('never hands a step to a worker past the gate (no eager lease with a report)', async () => {
    const gate = new CapGate(1);
    const engine = await engineWith(gate);
    const run = await engine.runs.start({ namespace: 'default', definition: 'gated-chain', input: {} });
    const [a] = await lease(engine, ['gated.work'], 1);
    expect(gate.inUse).toBe(1);
    const out = await engine.tasks.report({
      namespace: 'default',
      worker: 'w',
      reports: [completed(a!, 'ok')],
      next: { taskTypes: ['gated.work'], max: 1 },
    });
    // b was decided by the report's transaction, but it is claimed only through the gate.
    expect(out.leased).toEqual([]);
    expect(gate.inUse).toBe(0);
    const [b] = await lease(engine, ['gated.work'], 1);
    expect(b?.nodeId).toBe('b');
    expect(gate.inUse).toBe(1);
    expect((await engine.runs.get(run.id)).status).toBe('running');
  });

  it('offers a deferred step of a lease by id again later, through the dispatcher', async () => {
    const list = new ListDispatcher();
    const gate = new CapGate(5, 1, 300);
    const engine = await engineWith(gate, { dispatcher: list });
    const run = await engine.runs.start({ namespace: 'default', definition: 'gated', input: {} });
    const first = list.takeDue();
    expect(first).toHaveLength(1);
    const got = await engine.tasks.leaseById({
      namespace: 'default',
      worker: 'w',
      taskTypes: ['gated.work'],
      tasks: [{ ...first[0]!, taskType: 'gated.work' }],
    });
    expect(got).toEqual([]);
    // Deferred: not claimed, still queued, and sent again with a not-before time.
    const [task] = await engine.context.store.listTasks(run.id);
    expect(task!.status).toBe('queued');
    expect(list.messages).toHaveLength(1);
    expect(list.messages[0]!.notBefore!.getTime()).toBeGreaterThan(Date.now());
    expect(list.takeDue()).toEqual([]);
    const again = await eventually(async () => list.takeDue()[0], 3000, 'the deferred message to come due');
    const [leased] = await engine.tasks.leaseById({
      namespace: 'default',
      worker: 'w',
      taskTypes: ['gated.work'],
      tasks: [again],
    });
    expect(leased?.attempt).toBe(1);
    expect(gate.inUse).toBe(1);
    await engine.tasks.report({ namespace: 'default', worker: 'w', reports: [completed(leased!, 'ok')] });
    expect(gate.inUse).toBe(0);
    expect((await engine.runs.get(run.id)).status).toBe('completed');
  });

  it('a claim loser releases its gate slot (six servers lease one message at once)', async () => {
    const gate = new CapGate(100);
    const list = new ListDispatcher();
    const six = await Promise.all(Array.from({ length: 6 }, () => engineWith(gate, { dispatcher: list })));
    const run = await six[0]!.runs.start({ namespace: 'default', definition: 'gated', input: {} });
    const [message] = list.takeDue();
    const results = await Promise.all(
      six.map((e, i) =>
        e.tasks.leaseById({
          namespace: 'default',
          worker: `w${i}`,
          taskTypes: ['gated.work'],
          tasks: [message!],
        }),
      ),
    );
    const winners = results.flat();
    expect(winners).toHaveLength(1);
    expect(gate.admitted).toBe(6);
    // Five lost the claim and gave their slot back at once; the winner holds one until it reports.
    expect(gate.inUse).toBe(1);
    const owner = six[results.findIndex((r) => r.length === 1)]!;
    await owner.tasks.report({ namespace: 'default', worker: 'w', reports: [completed(winners[0]!, null)] });
    expect(gate.inUse).toBe(0);
    expect((await owner.runs.get(run.id)).status).toBe('completed');
  });

  it('a claim loser on the table poll path releases its slot (six servers poll one task at once)', async () => {
    const gate = new CapGate(100);
    const six = await Promise.all(Array.from({ length: 6 }, () => engineWith(gate)));
    await six[0]!.runs.start({ namespace: 'default', definition: 'gated', input: {} });
    const got = (await Promise.all(six.map((e, i) => lease(e, ['gated.work'], 1, `p${i}`)))).flat();
    expect(got).toHaveLength(1);
    expect(gate.inUse).toBe(1);
    expect(gate.released).toBe(gate.admitted - 1);
  });

  it('releases the slot of an attempt whose lease expired', async () => {
    const gate = new CapGate(100);
    const engine = await engineWith(gate, {
      config: { backgroundLoops: false, crossProcessWakeups: false, systemTasks: false, leaseMs: 200 },
    });
    await engine.runs.start({ namespace: 'default', definition: 'gated', input: {} });
    const [task] = await lease(engine, ['gated.work'], 1);
    expect(task).toBeDefined();
    expect(gate.inUse).toBe(1);
    await new Promise((r) => setTimeout(r, 300));
    await leaseRound(engine.context);
    expect(gate.inUse).toBe(0);
  });

  it('releases the slot of an attempt that ended through another server', async () => {
    const gate = new CapGate(100);
    const holder = await engineWith(gate);
    const other = await engineWith(new CapGate(100));
    const run = await holder.runs.start({ namespace: 'default', definition: 'gated', input: {} });
    await lease(holder, ['gated.work'], 1);
    expect(gate.inUse).toBe(1);
    await other.runs.cancel(run.id, 'test', 'ended elsewhere');
    await leaseRound(holder.context);
    expect(gate.inUse).toBe(0);
  });
});
