import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './helpers.js';

const FLOW = `
name: ops-flow
nodes:
  - { id: step, task_type: ops.step }
`;
const EVENTS = `
name: ops-events
nodes:
  - { id: tell, kind: event, sink: nowhere, payload: { n: 1 } }
`;

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
  expect((await t.call('POST', '/v1/definitions', FLOW)).status).toBe(201);
});
afterAll(async () => {
  await t?.close();
});

/** Waits (at most `ms`) until `check` gives something, and returns it. */
async function until<T>(check: () => Promise<T | null | undefined | false>, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('runs list filters and counts', () => {
  it('finds runs by id, by the start of an id and by idempotency key; counts them', async () => {
    const a = await t.call('POST', '/v1/runs', { definition: 'ops-flow', idempotency_key: 'order-41' });
    const b = await t.call('POST', '/v1/runs', { definition: 'ops-flow' });
    const byId = await t.call('GET', `/v1/runs?run_id=${a.body.id}`);
    expect(byId.body.items.map((r: any) => r.id)).toEqual([a.body.id]);
    const prefix = a.body.id.slice(0, 13);
    const byPrefix = await t.call('GET', `/v1/runs?run_id=${prefix}`);
    expect(byPrefix.body.items.map((r: any) => r.id)).toContain(a.body.id);
    expect(byPrefix.body.items.every((r: any) => r.id.startsWith(prefix))).toBe(true);
    const byKey = await t.call('GET', '/v1/runs?idempotency_key=order-41');
    expect(byKey.body.items.map((r: any) => r.id)).toEqual([a.body.id]);
    const count = await t.call('GET', '/v1/runs/count?definition=ops-flow&status=running');
    expect(count.body.count).toBeGreaterThanOrEqual(2);
    expect(count.body.capped).toBe(false);
    const one = await t.call('GET', `/v1/runs/count?run_id=${b.body.id}`);
    expect(one.body).toEqual({ count: 1, capped: false });
  });

  it('refuses filters it cannot read, naming the field', async () => {
    for (const [query, field] of [
      ['run_id=not-hex!', 'run_id'],
      ['version=2', 'version'],
      ['started_after=yesterday', 'started_after'],
      ['limit=0', 'limit'],
    ] as const) {
      const res = await t.call('GET', `/v1/runs?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body.error.message, query).toContain(field);
    }
    expect((await t.call('GET', '/v1/runs?stauts=failed')).status).toBe(400);
    expect((await t.call('GET', '/v1/runs/count?status=asleep')).status).toBe(400);
  });

  it('pages a start-time range newest first, each run once', async () => {
    const from = new Date(Date.now() - 1000).toISOString();
    const started: string[] = [];
    for (let i = 0; i < 5; i++)
      started.push((await t.call('POST', '/v1/runs', { definition: 'ops-flow' })).body.id);
    const seen: string[] = [];
    let cursor = '';
    do {
      const page = await t.call('GET', `/v1/runs?definition=ops-flow&started_after=${from}&limit=2${cursor}`);
      expect(page.status).toBe(200);
      seen.push(...page.body.items.map((r: any) => r.id));
      cursor = page.body.next_cursor ? `&cursor=${page.body.next_cursor}` : '';
    } while (cursor);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.slice(0, 5)).toEqual([...started].reverse());
  });

  it('filters by start time over HTTP: started_after includes its instant, started_before excludes it', async () => {
    await t.call(
      'POST',
      '/v1/definitions',
      'name: ops-timed\nnodes:\n  - { id: step, task_type: ops.timed }\n',
    );
    // Three runs, each started in a later millisecond than the one before (the API's times are in ms).
    const runs: { id: string; created_at: string }[] = [];
    for (let i = 0; i < 3; i++) {
      const { id } = (await t.call('POST', '/v1/runs', { definition: 'ops-timed' })).body;
      runs.push((await t.call('GET', `/v1/runs/${id}`)).body);
      const after = Date.parse(runs.at(-1)!.created_at);
      // (The database's clock, which gave created_at, may differ from this one: a second at most.)
      for (const end = Date.now() + 1000; Date.now() <= after + 1 && Date.now() < end; )
        await new Promise((r) => setTimeout(r, 2));
    }
    const [a, b, c] = runs as [(typeof runs)[0], (typeof runs)[0], (typeof runs)[0]];
    expect(new Set(runs.map((r) => r.created_at)).size).toBe(3);
    const ids = async (query: string) => {
      const res = await t.call('GET', `/v1/runs?definition=ops-timed&${query}`);
      expect(res.status, query).toBe(200);
      return res.body.items.map((r: { id: string }) => r.id);
    };
    expect(await ids(`started_after=${b.created_at}`)).toEqual([c.id, b.id]);
    expect(await ids(`started_before=${b.created_at}`)).toEqual([a.id]);
    expect(await ids(`started_after=${b.created_at}&started_before=${c.created_at}`)).toEqual([b.id]);
    expect(await ids(`started_after=${c.created_at}&started_before=${b.created_at}`)).toEqual([]);
    const counted = await t.call(
      'GET',
      `/v1/runs/count?definition=ops-timed&started_after=${a.created_at}&started_before=${c.created_at}`,
    );
    expect(counted.body).toEqual({ count: 2, capped: false });
    const bad = await t.call('GET', '/v1/runs?started_before=not-a-time');
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({
      code: 'bad_request',
      message: expect.stringContaining('started_before'),
    });
  });

  it('bulk actions take the same filters: a dry run by id prefix names only those runs', async () => {
    const run = await t.call('POST', '/v1/runs', { definition: 'ops-flow' });
    const dry = await t.call('POST', '/v1/runs/bulk', {
      action: 'cancel',
      filter: { run_id: run.body.id },
      dry_run: true,
    });
    expect(dry.status).toBe(200);
    expect(dry.body.done_ids).toEqual([run.body.id]);
  });
});

describe('workers seen', () => {
  it('lists a worker from its first poll, and writes it to the database later, not on the poll', async () => {
    const poll = await t.call('POST', '/v1/tasks/poll', {
      worker: 'ops-worker-1',
      task_types: ['ops.other', 'ops.step'],
      max: 1,
      wait_ms: 0,
    });
    expect(poll.status).toBe(200);
    const [row] = await t.db.sql`SELECT name FROM weft.workers WHERE name = 'ops-worker-1'`;
    expect(row).toBeUndefined();
    const listed = await t.call('GET', '/v1/workers');
    expect(listed.body.items).toContainEqual(
      expect.objectContaining({ name: 'ops-worker-1', task_types: ['ops.other', 'ops.step'] }),
    );
    const written = await until(async () => {
      const [r] = await t.db.sql`SELECT task_types AS types FROM weft.workers WHERE name = 'ops-worker-1'`;
      return r;
    });
    expect([...written.types].sort()).toEqual(['ops.other', 'ops.step']);
    expect((await t.call('GET', '/v1/workers?within_ms=10')).status).toBe(400);
  });
});

describe('outbox backlog, namespaces, validation and schedules', () => {
  it('shows messages waiting for a destination the server does not know', async () => {
    expect((await t.call('POST', '/v1/definitions', EVENTS)).status).toBe(201);
    await t.call('POST', '/v1/runs', { definition: 'ops-events' });
    const backlog = await until(async () => {
      const res = await t.call('GET', '/v1/outbox');
      return res.body.items.find((b: any) => b.destination === 'sink:nowhere' && b.retrying > 0);
    });
    expect(backlog).toMatchObject({ dead: 0 });
    expect(backlog.last_error).toMatch(/nowhere/);
    expect(backlog.oldest_at).not.toBeNull();
  });

  it('lists namespaces with definitions', async () => {
    await t.call('POST', '/v1/definitions', FLOW, { 'x-weft-namespace': 'ops-other' });
    const res = await t.call('GET', '/v1/namespaces');
    expect(res.body.items).toEqual(expect.arrayContaining(['default', 'ops-other']));
  });

  it('validates a definition without deploying it, each problem at its line', async () => {
    const good = await t.call('POST', '/v1/definitions/validate', FLOW);
    expect(good.body).toEqual({ valid: true, name: 'ops-flow', problems: [] });
    const bad = await t.call(
      'POST',
      '/v1/definitions/validate',
      'name: nope\nnodes:\n  - { id: a, task_type: x }\nedges:\n  - { from: a, to: b }\n',
    );
    expect(bad.status).toBe(200);
    expect(bad.body.valid).toBe(false);
    expect(bad.body.problems).toContainEqual(expect.objectContaining({ line: 5 }));
    expect((await t.call('GET', '/v1/definitions/nope')).status).toBe(404);
  });

  it('gives a schedule its next five fire times, and none while paused', async () => {
    const put = await t.call('PUT', '/v1/schedules/hourly', { definition: 'ops-flow', cron: '0 * * * *' });
    expect(put.status).toBe(200);
    const times = put.body.upcoming.map((s: string) => new Date(s).getTime());
    expect(times).toHaveLength(5);
    expect(put.body.upcoming[0]).toBe(put.body.next_at);
    for (let i = 1; i < 5; i++) expect(times[i] - times[i - 1]).toBe(3_600_000);
    const paused = await t.call('POST', '/v1/schedules/hourly/pause');
    expect(paused.body.upcoming).toEqual([]);
  });
});
