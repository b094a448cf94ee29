import { Engine } from '@weft/engine';
import { PgStore } from '@weft/postgres';
import { buildApp } from '@weft/server';
import { createTestDatabase, type TestDatabase } from '@weft/testing';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// Forks over HTTP: a new run answered with its link, and the links of both runs.

const DEF = `
name: api-fork
nodes:
  - { id: a, task_type: api.fork }
  - { id: b, task_type: api.fork, input: { a: nodes.a.output } }
edges:
  - { from: a, to: b }
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
  await engine.definitions.deploy('default', DEF);
});
afterAll(async () => {
  await app?.close();
  await engine?.stop();
  await db?.drop();
});

async function call(method: 'GET' | 'POST', url: string, payload?: unknown) {
  const res = await app.inject({
    method,
    url,
    ...(payload !== undefined ? { payload: payload as object } : {}),
  });
  return { status: res.statusCode, body: res.json() };
}

describe('forks over HTTP', () => {
  it('forks up to a node, answering the new run and its link, and shows the links of both runs', async () => {
    const source = (await call('POST', '/v1/runs', { definition: 'api-fork', input: { x: 1 } })).body.id;
    const [a] = await engine.tasks.poll({
      namespace: 'default',
      worker: 'w',
      taskTypes: ['api.fork'],
      max: 1,
      waitMs: 5000,
    });
    await engine.tasks.report({
      namespace: 'default',
      worker: 'w',
      reports: [
        {
          runId: a!.runId,
          taskId: a!.id,
          attempt: a!.attempt,
          leaseToken: a!.leaseToken,
          outcome: { kind: 'completed', output: 'A' },
        },
      ],
    });
    const fork = await call('POST', `/v1/runs/${source}/fork`, {
      up_to_node: 'a',
      input: { x: 2 },
      by: 'bob',
    });
    expect(fork).toMatchObject({
      status: 201,
      body: { status: 'running', input: { x: 2 }, forked_from: source, up_to_node: 'a' },
    });
    expect(await call('GET', `/v1/runs/${fork.body.id}/forks`)).toEqual({
      status: 200,
      body: { run_id: fork.body.id, forked_from: source, up_to_node: 'a', forks: [] },
    });
    expect((await call('GET', `/v1/runs/${source}/forks`)).body).toMatchObject({
      forked_from: null,
      forks: [fork.body.id],
    });
    // The fork's b reads the reused output of a.
    const [b] = await engine.tasks.poll({
      namespace: 'default',
      worker: 'w',
      taskTypes: ['api.fork'],
      max: 5,
      waitMs: 5000,
    });
    expect(b).toMatchObject({ runId: expect.any(String), input: { a: 'A' } });
  });

  it('answers a node that has not completed with 409, and a run of another namespace with 404', async () => {
    const source = (await call('POST', '/v1/runs', { definition: 'api-fork', input: {} })).body.id;
    expect(await call('POST', `/v1/runs/${source}/fork`, { up_to_node: 'b' })).toMatchObject({
      status: 409,
      body: { error: { code: 'fork_not_possible' } },
    });
    const other = await app.inject({
      method: 'POST',
      url: `/v1/runs/${source}/fork`,
      headers: { 'x-weft-namespace': 'elsewhere' },
      payload: {},
    });
    expect(other.statusCode).toBe(404);
    expect((await call('GET', '/v1/runs/nope/forks')).status).toBe(404);
  });
});
