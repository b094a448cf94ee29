import { Engine } from '@weft/engine';
import { PgStore } from '@weft/postgres';
import { buildApp } from '@weft/server';
import { createTestDatabase, type TestDatabase } from '@weft/testing';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The engine's hooks seen by HTTP clients: a refused start is a 403 with its code, and the context a
// step-context hook builds travels to the worker with the lease.

let db: TestDatabase;
let engine: Engine;
let app: FastifyInstance;

beforeAll(async () => {
  db = await createTestDatabase();
  engine = new Engine({
    store: new PgStore(db.pool(4)),
    config: { decidePollMs: 20, crossProcessWakeups: false },
    hooks: {
      beforeStart: (r) =>
        (r.input as { blocked?: boolean } | null)?.blocked
          ? { kind: 'refuse', code: 'tenant_blocked', message: 'this tenant may not start runs' }
          : { kind: 'allow' },
      stepContext: (task) => ({ tenant: 'acme', definition: task.definitionName }),
    },
  });
  await engine.start();
  // Route behaviour, in process: who may call is authorization.test.ts's subject.
  app = buildApp({ engine, auth: { mode: 'off' } });
  await engine.definitions.deploy(
    'default',
    'name: api-hooked\nnodes:\n  - { id: a, task_type: api.hooked }\n',
  );
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

describe('hooks over HTTP', () => {
  it('answers a refused start with 403 and the refusal code, and starts nothing', async () => {
    const refused = await post('/v1/runs', { definition: 'api-hooked', input: { blocked: true } });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({ code: 'start_refused' });
    expect(refused.body.error.message).toContain('tenant_blocked');
    const [row] = await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM weft.runs`;
    expect(row!.n).toBe(0);
  });

  it('sends the step context with each leased task', async () => {
    const started = await post('/v1/runs', { definition: 'api-hooked', input: {} });
    expect(started.status).toBe(201);
    const polled = await post('/v1/tasks/poll', { worker: 'w1', task_types: ['api.hooked'], max: 1 });
    expect(polled.status).toBe(200);
    expect(polled.body.tasks).toHaveLength(1);
    expect(polled.body.tasks[0].context).toEqual({ tenant: 'acme', definition: 'api-hooked' });
  });
});
