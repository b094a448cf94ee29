import type { Json } from '@weft/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { completed, eventually, type Harness, harness, lease } from './helpers.js';

// A worker's output PostgreSQL cannot store (U+0000 in text, half a surrogate pair, nesting past the JSON
// limit) fails that attempt for good with `output_not_storable` and the path of the bad value; the other
// reports of the batch land, and the run goes on by its retry policy (no retry: the output would be the same).

let h: Harness;
beforeAll(async () => {
  h = await harness();
  await h.engine.definitions.deploy(
    'default',
    'name: unstorable\nnodes:\n  - { id: a, task_type: unstorable.a, retry: { max_attempts: 3, delay: 10ms } }\n',
  );
});
afterAll(async () => {
  await h?.close();
});

function deep(levels: number): Json {
  let value: Json = 'bottom';
  for (let i = 0; i < levels; i++) value = [value];
  return value;
}

describe('an output PostgreSQL cannot store', () => {
  it.each([
    ['U+0000 in a value', { v: 'a\u0000b' }, 'output.v'],
    ['U+0000 in a key', { 'k\u0000': 1 }, 'output'],
    ['a lone surrogate', ['ok', '\ud800'], 'output[1]'],
    ['nesting 5000 deep', deep(5000), `output${'[0]'.repeat(512)}`],
  ])('fails the attempt for good: %s', async (_what, output, path) => {
    const bad = await h.engine.runs.start({ namespace: 'default', definition: 'unstorable', input: {} });
    const good = await h.engine.runs.start({ namespace: 'default', definition: 'unstorable', input: {} });
    const tasks = await eventually(async () => {
      const leased = await lease(h.engine, ['unstorable.a']);
      return leased.length === 2 ? leased : undefined;
    });
    const badTask = tasks.find((t) => t.runId === bad.id)!;
    const goodTask = tasks.find((t) => t.runId === good.id)!;
    const { verdicts } = await h.engine.tasks.report({
      namespace: 'default',
      worker: 'w',
      reports: [completed(badTask, output as Json), completed(goodTask, { fine: true })],
    });
    expect(verdicts.map((v) => v.accepted)).toEqual([true, true]);
    const failed = await eventually(async () => {
      const run = await h.engine.runs.get(bad.id);
      return run.status === 'failed' ? run : undefined;
    });
    const attempts = await h.store.listTasks(failed.id);
    expect(attempts).toHaveLength(1);
    expect(attempts[0]!.error).toMatchObject({
      retryable: false,
      type: 'output_not_storable',
      details: { code: 'output_not_storable', path },
    });
    const done = await eventually(async () => {
      const run = await h.engine.runs.get(good.id);
      return run.status === 'completed' ? run : undefined;
    });
    expect(done.output).toEqual({ a: { fine: true } });
  });

  it('fails the attempt for good when PostgreSQL refuses an output the checks let through', async () => {
    // A trigger refuses one marked output the way PostgreSQL refuses a value it cannot store (class 22).
    await h.db.sql.unsafe(`
      CREATE OR REPLACE FUNCTION weft.planted_refusal() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.output::text LIKE '%refuse-me%' THEN
          RAISE EXCEPTION 'planted: unsupported Unicode escape sequence' USING ERRCODE = '22P05';
        END IF;
        RETURN NEW;
      END $$`);
    await h.db.sql.unsafe(`
      CREATE TRIGGER planted_refusal BEFORE UPDATE ON weft.tasks
        FOR EACH ROW EXECUTE FUNCTION weft.planted_refusal()`);
    try {
      const bad = await h.engine.runs.start({ namespace: 'default', definition: 'unstorable', input: {} });
      const good = await h.engine.runs.start({ namespace: 'default', definition: 'unstorable', input: {} });
      const tasks = await eventually(async () => {
        const leased = await lease(h.engine, ['unstorable.a']);
        return leased.length === 2 ? leased : undefined;
      });
      const badTask = tasks.find((t) => t.runId === bad.id)!;
      const goodTask = tasks.find((t) => t.runId === good.id)!;
      const { verdicts } = await h.engine.tasks.report({
        namespace: 'default',
        worker: 'w',
        reports: [completed(badTask, { v: 'refuse-me' }), completed(goodTask, { fine: true })],
      });
      expect(verdicts.map((v) => v.accepted)).toEqual([true, true]);
      const failed = await eventually(async () => {
        const run = await h.engine.runs.get(bad.id);
        return run.status === 'failed' ? run : undefined;
      });
      const attempts = await h.store.listTasks(failed.id);
      expect(attempts).toHaveLength(1);
      expect(attempts[0]!.error).toMatchObject({
        retryable: false,
        type: 'output_not_storable',
        details: { code: 'output_not_storable', path: 'output' },
      });
      expect(attempts[0]!.error!.message).toContain('planted: unsupported Unicode escape sequence');
      const done = await eventually(async () => {
        const run = await h.engine.runs.get(good.id);
        return run.status === 'completed' ? run : undefined;
      });
      expect(done.output).toEqual({ a: { fine: true } });
    } finally {
      await h.db.sql.unsafe('DROP TRIGGER planted_refusal ON weft.tasks');
    }
  });
});
