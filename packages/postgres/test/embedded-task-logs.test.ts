import { defineStep, defineWorkflow } from '@weft/core';
import { createEngine, type EmbeddedEngine, handle } from '@weft/embedded';
import { PgStore, PgTaskLogStore } from '@weft/postgres';
import { createTestDatabase, type TestDatabase } from '@weft/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// ctx.log in the embedded engine: written through the engine's task log service, before the report.

const charge = defineStep<{ amount: number }, { ok: boolean }>('emb.charge');
const workflow = defineWorkflow<{ amount: number }, { ok: boolean }>('embedded-logs')
  .task('charge', charge, { input: { amount: 5 } })
  .build();

let db: TestDatabase;
let engine: EmbeddedEngine;
beforeAll(async () => {
  db = await createTestDatabase();
  engine = createEngine({
    store: new PgStore(db.pool(6)),
    taskLogStore: new PgTaskLogStore(db.pool(2)),
    config: { decidePollMs: 50, timerPollMs: 50, leasePollMs: 100 },
    handlers: [
      handle(charge, ({ amount }, ctx) => {
        ctx.log.info('charging', { amount });
        ctx.log.warn('slow provider');
        return { ok: true };
      }),
    ],
  });
});
afterAll(async () => {
  await engine?.stop();
  await db?.drop();
});

describe('ctx.log in the embedded engine', () => {
  it('keeps the lines with the run, written before the report', async () => {
    const run = await engine.start(workflow, { amount: 5 });
    await expect(run.result()).resolves.toEqual({ charge: { ok: true } });
    const { lines } = await engine.engine.logs.list({ runId: run.id, limit: 10 });
    expect(lines.map((l) => [l.nodeId, l.level, l.message, l.fields])).toEqual([
      ['charge', 'info', 'charging', { amount: 5 }],
      ['charge', 'warn', 'slow provider', null],
    ]);
  });
});
