import type { LeasedTask, TaskLogLine } from '@weft/engine';
import { TaskLogService, truncationMarker } from '@weft/engine';
import { PgTaskLogStore } from '@weft/postgres';
import type { Sql } from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { completed, eventually, type Harness, harness, lease } from '../helpers.js';

// Invariant 13 for task logs: a log write is fenced by the lease like a report; and the bounds of an
// attempt's log hold when its writes race (invariant 19: the attempt's log row is taken by one upsert).

let h: Harness;
let pool: Sql;
let logs: TaskLogService;
const LIMITS = { lineBytes: 200, linesPerAttempt: 50, bytesPerAttempt: 1024 * 1024 };

beforeAll(async () => {
  // Leases short enough for the expiry test to be quick, long enough for a loaded machine.
  h = await harness({ leaseMs: 1500, leasePollMs: 50 });
  // Writes go through their own pool: real connections of their own, racing the engine's.
  pool = h.db.pool(12);
  logs = new TaskLogService(new PgTaskLogStore(pool), LIMITS);
});
afterAll(async () => {
  await pool?.end();
  await h?.close();
});

const held = (t: LeasedTask) => ({
  runId: t.runId,
  taskId: t.id,
  attempt: t.attempt,
  leaseToken: t.leaseToken,
});
const lines = (n: number, prefix = 'line'): TaskLogLine[] =>
  Array.from({ length: n }, (_, i) => ({ level: 'info', message: `${prefix} ${i}` }));

/** What a write came to: its verdict, or the code of its refusal. */
async function write(t: LeasedTask, n: number, prefix?: string) {
  try {
    return await logs.append('default', held(t), lines(n, prefix));
  } catch (e) {
    return { refused: (e as { code?: string }).code ?? String(e) };
  }
}

async function start(name: string, retry = ''): Promise<string> {
  await h.engine.definitions.deploy(
    'default',
    `name: ${name}\nnodes:\n  - { id: a, task_type: ${name}${retry} }\n`,
  );
  return (await h.engine.runs.start({ namespace: 'default', definition: name, input: {} })).id;
}

describe('task logs', () => {
  it('refuses a log write from an attempt whose lease was lost; the next attempt writes', async () => {
    const runId = await start('logfence1', ', retry: { max_attempts: 3, delay: 0s }');
    const [slow] = await lease(h.engine, ['logfence1'], 1, 'slow-worker');
    expect(await write(slow!, 2, 'first')).toEqual({ kept: 2, dropped: 0, truncated: false });
    // The slow worker stops heartbeating; its lease expires and attempt 2 goes to another worker.
    const second = await eventually(
      async () => (await lease(h.engine, ['logfence1'], 1, 'fast-worker'))[0],
      30_000,
      'attempt 2',
    );
    expect(second.attempt).toBe(2);
    expect(await write(slow!, 1, 'stale')).toEqual({ refused: 'lease_lost' });
    // A forged token is refused as well.
    const forged = { ...held(second), leaseToken: '00000000-0000-4000-8000-000000000000' };
    await expect(logs.append('default', forged, lines(1))).rejects.toMatchObject({
      code: 'lease_lost',
      status: 409,
    });
    const kept = await write(second, 1, 'second');
    // A machine stalled past the 1.5 s lease makes attempt 2 expire too; then it is refused like the first.
    if (!('refused' in kept)) expect(kept).toEqual({ kept: 1, dropped: 0, truncated: false });
    const page = await logs.list({ runId, limit: 100 });
    expect(page.lines.map((l) => [l.attempt, l.message])).toEqual([
      [1, 'first 0'],
      [1, 'first 1'],
      ...('refused' in kept ? [] : [[2, 'second 0']]),
    ]);
    expect(page.lines.some((l) => l.message.startsWith('stale'))).toBe(false);
    expect((await logs.list({ runId, attempt: 1, limit: 100 })).lines).toHaveLength(2);
  });

  it('writes racing the report on separate connections are kept before it commits and refused after', async () => {
    // Not left to timing: one write lands before the report is sent, then writes go on three at a time, on
    // their own connections, while the report commits, until one is refused because the report won.
    for (let round = 0; round < 5; round++) {
      const runId = await start(`lograce${round}`);
      const [task] = await lease(h.engine, [`lograce${round}`], 1);
      const verdicts = [await write(task!, 1, 'before')];
      expect(verdicts[0]).toEqual({ kept: 1, dropped: 0, truncated: false });
      const report = h.engine.tasks.report({
        namespace: 'default',
        worker: 'w',
        reports: [completed(task!)],
      });
      const until = Date.now() + 30_000;
      while (!verdicts.some((v) => 'refused' in v)) {
        if (Date.now() > until) throw new Error('no write was refused within 30 s of the report');
        verdicts.push(...(await Promise.all([0, 1, 2].map((i) => write(task!, 1, `w${i}`)))));
      }
      expect((await report).verdicts[0]!.accepted).toBe(true);
      for (const v of verdicts) {
        // Every write has a verdict: kept, or refused with lease_lost; no deadlock, no other error.
        if ('refused' in v) expect(v.refused).toBe('lease_lost');
        else expect(v).toEqual({ kept: 1, dropped: 0, truncated: false });
      }
      const keptNow = verdicts.filter((v) => !('refused' in v)).length;
      // What the writes were told is what is kept.
      expect((await logs.list({ runId, limit: 1000 })).lines).toHaveLength(keptNow);
      // After the report, every write is refused.
      expect(await write(task!, 1, 'late')).toEqual({ refused: 'lease_lost' });
    }
  });

  it('concurrent writes of one attempt keep its bounds', async () => {
    const runId = await start('logbound');
    const [task] = await lease(h.engine, ['logbound'], 1);
    // 20 writes of 5 lines on 12 connections: 100 lines for a bound of 50.
    const verdicts = await Promise.all(Array.from({ length: 20 }, (_, i) => write(task!, 5, `w${i}`)));
    const kept = verdicts.reduce((n, v) => n + ('kept' in v ? v.kept : 0), 0);
    const dropped = verdicts.reduce((n, v) => n + ('dropped' in v ? v.dropped : 0), 0);
    expect({ kept, dropped }).toEqual({ kept: 50, dropped: 50 });
    const page = await logs.list({ runId, limit: 1000 });
    // 50 lines and one marker, last; numbered 1 to 51 within the attempt without a gap or a repeat.
    expect(page.lines).toHaveLength(51);
    expect(page.lines.at(-1)).toMatchObject({ level: 'warn', message: truncationMarker(LIMITS) });
    expect(page.lines.filter((l) => l.message === truncationMarker(LIMITS))).toHaveLength(1);
    const seqs = await pool<{ seq: number }[]>`
      SELECT seq FROM weft.task_logs WHERE run_id = ${runId} ORDER BY id`;
    expect(seqs.map((r) => r.seq)).toEqual(Array.from({ length: 51 }, (_, i) => i + 1));
    // Once truncated, nothing more is kept.
    expect(await write(task!, 3)).toEqual({ kept: 0, dropped: 3, truncated: true });
  });

  it('cuts a long line to the line bound, and deleting the run deletes its logs', async () => {
    const runId = await start('logcut');
    const [task] = await lease(h.engine, ['logcut'], 1);
    await logs.append('default', held(task!), [
      { level: 'error', message: 'é'.repeat(500), fields: { order: 42 } },
    ]);
    const [line] = (await logs.list({ runId, limit: 10 })).lines;
    expect(line!.fields).toEqual({ order: 42 });
    expect(Buffer.byteLength(line!.message) + JSON.stringify({ order: 42 }).length).toBeLessThanOrEqual(200);
    expect(line!.message).toMatch(/^é+ … \[\d+ bytes cut\]$/);
    await h.engine.tasks.report({ namespace: 'default', worker: 'w', reports: [completed(task!)] });
    await eventually(async () =>
      (await h.engine.runs.get(runId)).status === 'completed' ? true : undefined,
    );
    await pool`DELETE FROM weft.runs WHERE id = ${runId}`;
    const left = await pool`
      SELECT (SELECT count(*)::int FROM weft.task_logs WHERE run_id = ${runId}) AS lines,
             (SELECT count(*)::int FROM weft.task_log_attempts WHERE run_id = ${runId}) AS attempts`;
    expect(left[0]).toEqual({ lines: 0, attempts: 0 });
  });
});
