import { Engine } from '@weft/engine';
import { PgStore } from '@weft/postgres';
import { buildApp } from '@weft/server';
import { createTestDatabase, type TestDatabase } from '@weft/testing';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// Moving runs to another version over HTTP: a plan that changes nothing and says why not, then the move.

const V1 = `
name: api-move
nodes:
  - { id: a, task_type: api.move }
  - { id: b, task_type: api.move }
  - { id: c, task_type: api.move }
edges:
  - { from: a, to: b }
  - { from: b, to: c }
`;
const V2 = `
name: api-move
nodes:
  - { id: a, task_type: api.move }
  - { id: b2, task_type: api.move }
  - { id: x, task_type: api.move }
  - { id: c, task_type: api.move }
edges:
  - { from: a, to: b2 }
  - { from: b2, to: x }
  - { from: x, to: c }
`;

let db: TestDatabase;
let engine: Engine;
let app: FastifyInstance;

beforeAll(async () => {
  db = await createTestDatabase();
  engine = new Engine({
    store: new PgStore(db.pool(4)),
    config: { decidePollMs: 20, crossProcessWakeups: false },
  });
  await engine.start();
  app = buildApp({ engine, auth: { mode: 'off' } });
  await engine.definitions.deploy('default', V1);
  await engine.definitions.deploy('default', V2);
});
afterAll(async () => {
  await app?.close();
  await engine?.stop();
  await db?.drop();
});

async function post(url: string, payload: unknown) {
  const res = await app.inject({ method: 'POST', url, payload: payload as object });
  return { status: res.statusCode, body: res.json() };
}

/** Starts a run on version 1 and completes its first `steps` tasks (tasks of other runs polled meanwhile stay leased). */
async function runAt(steps: number): Promise<string> {
  const run = await engine.runs.start({
    namespace: 'default',
    definition: 'api-move',
    version: 1,
    input: {},
  });
  for (let done = 0; done < steps; ) {
    const tasks = await engine.tasks.poll({
      namespace: 'default',
      worker: 'w',
      taskTypes: ['api.move'],
      max: 20,
      waitMs: 5_000,
    });
    for (const task of tasks.filter((t) => t.runId === run.id)) {
      await engine.tasks.report({
        namespace: 'default',
        worker: 'w',
        reports: [
          {
            runId: task.runId,
            taskId: task.id,
            attempt: task.attempt,
            leaseToken: task.leaseToken,
            outcome: { kind: 'completed', output: done },
          },
        ],
      });
      done++;
    }
  }
  return run.id;
}

describe('moving runs over HTTP', () => {
  it('plans without changing anything, saying why a run cannot move, then moves the movable ones', async () => {
    const early = await runAt(1); // b is queued or running: it can move, renamed b2
    const late = await runAt(2); // b passed control on to c: version 2 would never run x
    const body = { definition: 'api-move', to_version: 2, node_map: { b: 'b2' }, run_ids: [early, late] };
    const plan = await post('/v1/runs/migrate/plan', body);
    expect(plan).toMatchObject({ status: 200, body: { to_version: 2, movable: 1, refused: 1 } });
    const byId = new Map(plan.body.runs.map((r: { run_id: string }) => [r.run_id, r]));
    expect(byId.get(early)).toEqual({ run_id: early, from_version: 1, movable: true, reasons: [] });
    expect(byId.get(late)).toMatchObject({ movable: false });
    expect((byId.get(late) as { reasons: string[] }).reasons.join(' ')).toMatch(
      /node "b" \(now "b2"\) has finished, and version 2 changes where it leads \(from c to x\)/,
    );
    expect((await engine.runs.get(early)).definitionVersion).toBe(1);

    const moved = await post('/v1/runs/migrate', { ...body, by: 'alice', reason: 'fix the flow' });
    expect(moved).toMatchObject({ status: 200, body: { moved: 1, refused: 1 } });
    expect((await engine.runs.get(early)).definitionVersion).toBe(2);
    expect((await engine.runs.get(late)).definitionVersion).toBe(1);
    const history = await engine.context.store.readHistory(early, 0, 100);
    expect(history.find((e) => e.type === 'run.migrated')?.data).toEqual({
      by: 'alice',
      reason: 'fix the flow',
      from_version: 1,
      to_version: 2,
      node_map: { b: 'b2' },
    });
    // Moving again says the run is there already.
    const again = await post('/v1/runs/migrate', { ...body, run_ids: [early] });
    expect(again.body.runs[0]).toMatchObject({ moved: false, reasons: ['the run is on version 2 already'] });
  });

  it('lists the running runs of a version when no ids are given', async () => {
    const id = await runAt(0);
    const plan = await post('/v1/runs/migrate/plan', {
      definition: 'api-move',
      from_version: 1,
      to_version: 2,
      node_map: { b: 'b2' },
    });
    expect(plan.status).toBe(200);
    expect(plan.body.runs.map((r: { run_id: string }) => r.run_id)).toContain(id);
    expect(plan.body.runs.find((r: { run_id: string }) => r.run_id === id)).toMatchObject({ movable: true });
  });

  it('refuses what it cannot use, saying what to do', async () => {
    const id = await runAt(0);
    expect(
      await post('/v1/runs/migrate/plan', { definition: 'api-move', to_version: 9, run_ids: [id] }),
    ).toMatchObject({ status: 404, body: { error: { code: 'definition_not_found' } } });
    expect(
      await post('/v1/runs/migrate', { definition: 'api-move', to_version: 2, run_ids: ['nope'] }),
    ).toMatchObject({ status: 400, body: { error: { code: 'bad_request' } } });
    expect(await post('/v1/runs/migrate', { definition: 'api-move', to_version: 2 })).toMatchObject({
      status: 400,
    });
    const unknown = await post('/v1/runs/migrate/plan', {
      definition: 'api-move',
      to_version: 2,
      node_map: { zz: 'b2' },
      run_ids: [id],
    });
    expect(unknown.body.runs[0].reasons.join(' ')).toMatch(/nodeMap names "zz"/);
    // Without the map, b would be a node version 2 does not have, and a is where it was: a run at a can
    // move; its b (not reached) simply is not in version 2.
    const plain = await post('/v1/runs/migrate/plan', {
      definition: 'api-move',
      to_version: 2,
      run_ids: [id],
    });
    expect(plain.body.runs[0]).toMatchObject({ movable: true });
  });
});
