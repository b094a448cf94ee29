import { nextTime } from '@weft/engine/internal';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Fleet, fleet } from './fleet.js';
import { completed, eventually } from './helpers.js';

// Schedules: cron in a time zone, an overlap policy, pause and resume; each due start happens once across
// replicas (the schedule row is fired under its lock, and the run is started with an idempotency key made
// of the schedule and the due time).

let f: Fleet;
beforeAll(async () => {
  f = await fleet(4, { backgroundLoops: true, schedulePollMs: 50 });
  await f.main.definitions.deploy('default', 'name: nightly\nnodes:\n  - { id: a, task_type: sched.a }\n');
});
afterAll(async () => {
  await f?.close();
});

async function runsOf(definition: string): Promise<{ id: string; status: string }[]> {
  return (await f.db.sql`
    SELECT id, status FROM weft.runs WHERE definition_name = ${definition} ORDER BY id`) as unknown as {
    id: string;
    status: string;
  }[];
}

/**
 * Fires a due schedule and waits until it has moved on: the replicas' own schedule loops may be the ones
 * that fire it (then this call skips the locked row and returns before the fire is recorded).
 */
async function fire(name: string) {
  await f.main.schedules.fire('default', name);
  await eventually(async () => {
    const s = await f.main.schedules.get('default', name);
    return s.nextAt && s.nextAt.getTime() > Date.now() ? true : undefined;
  });
}

let dueOffset = 0;
/** Makes a schedule due, each time at a different due time (as cron times are). */
async function makeDue(name: string) {
  dueOffset += 1;
  await f.db
    .sql`UPDATE weft.schedules SET next_at = date_trunc('second', now()) - ${dueOffset}::int * interval '1 minute'
                  WHERE name = ${name}`;
}

describe('schedules', () => {
  it('computes due times in the schedule time zone', () => {
    const after = new Date('2026-01-15T12:00:00Z');
    expect(nextTime('0 9 * * *', 'Europe/Paris', after)?.toISOString()).toBe('2026-01-16T08:00:00.000Z');
    expect(nextTime('0 9 * * *', 'America/New_York', after)?.toISOString()).toBe('2026-01-15T14:00:00.000Z');
    const summer = new Date('2026-07-15T12:00:00Z');
    expect(nextTime('0 9 * * *', 'Europe/Paris', summer)?.toISOString()).toBe('2026-07-16T07:00:00.000Z');
  });

  it('keeps local times across a daylight-saving change, starting a skipped or repeated time once', () => {
    /** The next `n` due times after `from`. */
    const dues = (cron: string, from: string, n: number) => {
      const out: string[] = [];
      let at = new Date(from);
      for (let i = 0; i < n; i++) {
        at = nextTime(cron, 'Europe/Paris', at)!;
        out.push(at.toISOString().slice(0, 16));
      }
      return out;
    };
    // Paris goes from UTC+1 to UTC+2 at 02:00 on 2026-03-29, and back at 03:00 on 2026-10-25.
    expect(dues('0 9 * * *', '2026-03-27T12:00:00Z', 3)).toEqual([
      '2026-03-28T08:00',
      '2026-03-29T07:00',
      '2026-03-30T07:00',
    ]);
    expect(dues('0 9 * * *', '2026-10-23T12:00:00Z', 3)).toEqual([
      '2026-10-24T07:00',
      '2026-10-25T08:00',
      '2026-10-26T08:00',
    ]);
    // 02:30 does not exist on 2026-03-29: it starts once, at 03:00 local.
    expect(dues('30 2 * * *', '2026-03-27T12:00:00Z', 3)).toEqual([
      '2026-03-28T01:30',
      '2026-03-29T01:00',
      '2026-03-30T00:30',
    ]);
    // 02:30 happens twice on 2026-10-25: it starts once, the first time.
    expect(dues('30 2 * * *', '2026-10-23T12:00:00Z', 3)).toEqual([
      '2026-10-24T00:30',
      '2026-10-25T00:30',
      '2026-10-26T01:30',
    ]);
    // Hourly: every real hour, through the repeated one and the skipped one.
    expect(dues('0 * * * *', '2026-10-24T23:30:00Z', 4)).toEqual([
      '2026-10-25T00:00',
      '2026-10-25T01:00',
      '2026-10-25T02:00',
      '2026-10-25T03:00',
    ]);
    expect(dues('0 * * * *', '2026-03-28T23:30:00Z', 3)).toEqual([
      '2026-03-29T00:00',
      '2026-03-29T01:00',
      '2026-03-29T02:00',
    ]);
  });

  it('refuses a bad cron expression or time zone', async () => {
    const base = { namespace: 'default', name: 'bad', definition: 'nightly' };
    await expect(f.main.schedules.put({ ...base, cron: 'every day' })).rejects.toMatchObject({
      code: 'bad_schedule',
    });
    await expect(
      f.main.schedules.put({ ...base, cron: '0 9 * * *', timezone: 'Mars/Olympus' }),
    ).rejects.toMatchObject({
      code: 'bad_schedule',
    });
    await expect(
      f.main.schedules.put({ ...base, definition: 'nope', cron: '0 9 * * *' }),
    ).rejects.toMatchObject({
      code: 'definition_not_found',
    });
  });

  it('four replicas firing one due schedule at once start one run', async () => {
    await f.main.definitions.deploy('default', 'name: once\nnodes:\n  - { id: a, task_type: sched.once }\n');
    await f.main.schedules.put({
      namespace: 'default',
      name: 'once',
      definition: 'once',
      cron: '0 0 1 1 *',
      overlap: 'allow',
      paused: false,
    });
    for (let round = 1; round <= 3; round++) {
      await f.db
        .sql`UPDATE weft.schedules SET next_at = now() - ${round}::int * interval '1 hour' WHERE name = 'once'`;
      await Promise.all(f.engines.map((e) => e.schedules.fire('default', 'once')));
      await fire('once'); // and the replicas' own loops: wait for the fire to be recorded
      expect(await runsOf('once')).toHaveLength(round);
    }
  });

  it('a replica that died after starting the run does not make a second one', async () => {
    await f.main.definitions.deploy(
      'default',
      'name: crashy\nnodes:\n  - { id: a, task_type: sched.crashy }\n',
    );
    await f.main.schedules.put({
      namespace: 'default',
      name: 'crashy',
      definition: 'crashy',
      cron: '0 0 1 1 *',
      overlap: 'allow',
      paused: true,
    });
    const due = new Date(Date.now() - 60_000);
    due.setMilliseconds(0);
    await f.db
      .sql`UPDATE weft.schedules SET paused = false, next_at = ${due.toISOString()}::timestamptz WHERE name = 'crashy'`;
    // The dead replica got as far as starting the run (same key), not as far as moving the schedule on.
    const first = await f.main.runs.open({
      namespace: 'default',
      definition: 'crashy',
      input: {},
      idempotencyKey: `schedule:crashy:${due.toISOString()}`,
    });
    await f.engines[1]!.schedules.fire('default', 'crashy');
    // (The replicas' own schedule loops may be the ones that fire it: wait for the schedule to move on.)
    const s = await eventually(async () => {
      const got = await f.main.schedules.get('default', 'crashy');
      return got.lastRunId ? got : undefined;
    });
    expect((await runsOf('crashy')).map((r) => r.id)).toEqual([first.run.id]);
    expect(s.lastRunId).toBe(first.run.id);
    expect(s.nextAt!.getTime()).toBeGreaterThan(Date.now());
  });

  it('runs on its own every second, once per due time, with four replicas looking', async () => {
    await f.main.definitions.deploy('default', 'name: tick\nnodes:\n  - { id: a, kind: noop }\n');
    await f.main.schedules.put({
      namespace: 'default',
      name: 'tick',
      definition: 'tick',
      cron: '* * * * * *',
      overlap: 'allow',
    });
    // Three firings, however long the replicas take to get to them; then the count is compared with the
    // seconds that passed on the database's clock, the one due times are read against.
    const [{ at: from }] = (await f.db.sql`SELECT now() AS at`) as unknown as [{ at: Date }];
    await eventually(
      async () => ((await runsOf('tick')).length >= 3 ? true : undefined),
      30_000,
      '3 firings',
    );
    await f.main.schedules.setPaused('default', 'tick', true);
    const [{ at: to }] = (await f.db.sql`SELECT now() AS at`) as unknown as [{ at: Date }];
    const runs = await runsOf('tick');
    // At most one start per due second: the seconds since the schedule was put (at most one due before it).
    expect(runs.length).toBeLessThanOrEqual(Math.ceil((to.getTime() - from.getTime()) / 1000) + 1);
    const [{ keys }] = (await f.db.sql`
      SELECT count(DISTINCT key)::int AS keys FROM weft.idempotency_keys WHERE key LIKE 'schedule:tick:%'`) as unknown as [
      { keys: number },
    ];
    expect(keys).toBe(runs.length);
    // Paused: neither the replicas' loops nor a direct fire on each replica start it.
    const paused = runs.length;
    await new Promise((r) => setTimeout(r, 1_200));
    for (const engine of f.engines) await engine.schedules.fire('default', 'tick');
    expect(await runsOf('tick')).toHaveLength(paused);
    const resuming = Date.now();
    const resumed = await f.main.schedules.setPaused('default', 'tick', false);
    expect(resumed.paused).toBe(false);
    // Resuming does not make up for the paused seconds: the next due time is not before the resume.
    expect(resumed.nextAt!.getTime()).toBeGreaterThan(resuming - 1000);
    await f.main.schedules.delete('default', 'tick');
  });

  it('overlap skip leaves out a start while the previous run runs; buffer_one starts it when that run ends', async () => {
    await f.main.schedules.put({
      namespace: 'default',
      name: 'skipper',
      definition: 'nightly',
      cron: '0 0 1 1 *',
      overlap: 'skip',
    });
    await makeDue('skipper');
    await fire('skipper');
    expect(await runsOf('nightly')).toHaveLength(1);
    await makeDue('skipper');
    await fire('skipper');
    expect(await runsOf('nightly')).toHaveLength(1);
    expect((await f.main.schedules.get('default', 'skipper')).lastOutcome).toMatch(/^skipped/);

    await f.main.schedules.put({
      namespace: 'default',
      name: 'buffer',
      definition: 'nightly',
      cron: '0 0 1 1 *',
      overlap: 'buffer_one',
    });
    await makeDue('buffer');
    await fire('buffer');
    expect(await runsOf('nightly')).toHaveLength(2);
    await makeDue('buffer');
    await fire('buffer');
    await makeDue('buffer');
    await fire('buffer');
    const buffered = await f.main.schedules.get('default', 'buffer');
    expect(buffered.bufferedAt).not.toBeNull();
    expect(await runsOf('nightly')).toHaveLength(2);
    // The previous run ends: the buffered start (one, not two) goes.
    const tasks = await f.main.tasks.poll({
      namespace: 'default',
      worker: 'w',
      taskTypes: ['sched.a'],
      max: 10,
      waitMs: 0,
    });
    const mine = tasks.filter((t) => t.runId === buffered.lastRunId);
    await f.main.tasks.report({ namespace: 'default', worker: 'w', reports: mine.map((t) => completed(t)) });
    // (The run commits just before the schedule records it: wait for the record.)
    await eventually(
      async () => ((await f.main.schedules.get('default', 'buffer')).bufferedAt === null ? true : undefined),
      5_000,
      'the buffered start',
    );
    expect(await runsOf('nightly')).toHaveLength(3);
  });
});
