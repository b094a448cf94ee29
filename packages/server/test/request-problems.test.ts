import { Engine } from '@weft/engine';
import { PgStore } from '@weft/postgres';
import { buildApp } from '@weft/server';
import { createTestDatabase, type TestDatabase } from '@weft/testing';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// A request that fails its route's schema gets a 400 naming every problem by its path.

let db: TestDatabase;
let engine: Engine;
let app: FastifyInstance;

beforeAll(async () => {
  db = await createTestDatabase();
  engine = new Engine({ store: new PgStore(db.pool(2)), config: { crossProcessWakeups: false } });
  // Route behaviour, in process: who may call is authorization.test.ts's subject.
  app = buildApp({ engine, auth: { mode: 'off' } });
});
afterAll(async () => {
  await app?.close();
  await engine?.stop();
  await db?.drop();
});

async function post(url: string, payload: unknown) {
  const res = await app.inject({ method: 'POST', url, payload: payload as object });
  return {
    status: res.statusCode,
    body: res.json() as { error: { code: string; message: string; details?: any } },
  };
}

const id = '0b9d3c1e-7f7a-4d2c-9a51-3f0e8a6b2c11';

describe('request bodies that fail their schema', () => {
  it('names the field of every problem, nested items included, not just the first', async () => {
    const res = await post('/v1/tasks/heartbeat', {
      tasks: [
        { run_id: id, task_id: id, attempt: 1, lease_token: id },
        { run_id: id, task_id: id, attempt: 0, lease_token: id, retires: 3 },
      ],
    });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('bad_request');
    const problems = res.body.error.details.problems.map(
      (p: { path: string; message: string }) => `${p.path}: ${p.message}`,
    );
    expect(problems).toEqual([
      'body.worker: is required',
      'body.tasks[1]: unknown field "retires": no additional fields are taken here (expected run_id, task_id, attempt, lease_token)',
      'body.tasks[1].attempt: must be >= 1',
    ]);
    expect(res.body.error.message).toBe(`the request body has 3 problems: ${problems.join('; ')}`);
  });

  it('says what a value should have been, and suggests the field meant', async () => {
    const res = await post('/v1/runs', {
      definition: 'orders',
      version: 'two',
      on_duplicate: 'skip',
      idempotency: 'k',
    });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toBe(
      'the request body has 3 problems: body: unknown field "idempotency" (did you mean "idempotency_key"?); ' +
        'body.version: must be integer, not text "two"; body.on_duplicate: must be one of "return", "error", not "skip"',
    );
  });

  it('names a bad path parameter', async () => {
    const res = await post('/v1/tasks/not-a-task/complete', { run_id: id, attempt: 1, lease_token: id });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/^the path has a problem: params\.id: must match pattern/);
  });

  it('lists only the first problem of a large body, and says so', async () => {
    const tasks = Array.from({ length: 1000 }, () => ({
      run_id: id,
      task_id: id,
      attempt: 1,
      lease_token: id,
      extra: 'x'.repeat(50),
    }));
    const res = await post('/v1/tasks/heartbeat', { worker: 'w', tasks });
    expect(res.status).toBe(400);
    expect(res.body.error.details.problems).toHaveLength(1);
    expect(res.body.error.message).toBe(
      'the request body has a problem: body.tasks[0]: unknown field "extra": no additional fields are taken here (expected run_id, task_id, attempt, lease_token) ' +
        '(only the first problem is listed for a request body over 64 KiB: fix it and send again)',
    );
  });
});
