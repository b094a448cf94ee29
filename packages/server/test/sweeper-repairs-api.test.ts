import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { TEST_ADMIN_KEY, TEST_AUTH_HEADERS } from '@weft/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './helpers.js';
import { samples, sampleValue } from './prometheus-text.js';

// The sweeper's audit over HTTP and the CLI, and in the metrics: a run stranded on purpose is repaired,
// its repair listed with what was found and changed, and a later round says the run moved.

const run = promisify(execFile);
const cli = new URL('../../cli/dist/main.js', import.meta.url).pathname;
const CHAIN = `
name: stranded
nodes:
  - { id: a, task_type: audit.a }
  - { id: b, task_type: audit.b }
edges:
  - { from: a, to: b }
`;

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ sweepPollMs: 3_600_000 });
  expect((await t.call('POST', '/v1/definitions', CHAIN)).status).toBe(201);
});
afterAll(async () => {
  await t?.close();
});

async function checkedCount(moved: 'true' | 'false'): Promise<number> {
  const res = await fetch(`${t.url}/metrics`, { headers: TEST_AUTH_HEADERS });
  return sampleValue(samples(await res.text()), 'weft_sweeper_repairs_checked_total', { moved }) ?? 0;
}

describe('GET /v1/sweeper/repairs and weft sweeper repairs', () => {
  it('lists a repair with what was found and changed, then whether the run moved', async () => {
    const started = await t.call('POST', '/v1/runs', { definition: 'stranded', input: {} });
    const runId = started.body.id as string;
    const poll = await t.call('POST', '/v1/tasks/poll', { worker: 'w', task_types: ['audit.a'], max: 1 });
    const [a] = poll.body.tasks;
    // Plant the bug: a completes, but no event and no decision request go with it; idle for ten minutes.
    await t.db.sql`UPDATE weft.tasks SET status = 'completed', output = '{}', finished_at = now()
                    WHERE run_id = ${runId}::uuid AND id = ${a.task_id}::uuid`;
    await t.db.sql`UPDATE weft.history SET at = at - interval '10 minutes' WHERE run_id = ${runId}::uuid`;
    const swept = await t.call('POST', '/v1/sweeper/run', { idle_ms: 300_000 });
    expect(swept.body.repaired).toEqual([runId]);

    const listed = await t.call('GET', `/v1/sweeper/repairs?run_id=${runId}`);
    expect(listed.status).toBe(200);
    expect(listed.body).toMatchObject({
      items: [
        {
          run_id: runId,
          definition: 'stranded',
          found: { status: 'running', last_event: { type: expect.any(String) } },
          changed: { tasks: [{ node: 'b', iteration: '', attempt: 1 }], status: null },
          moved: null,
          checked_at: null,
        },
      ],
      next_before: null,
    });
    expect(listed.body.items[0].found.idle_ms).toBeGreaterThanOrEqual(300_000);
    expect(listed.body.items[0].changed.events[0]).toBe('run.repaired');

    // A round one idle threshold later checks it: b is queued, so the run moved; counted in the metrics.
    const before = await checkedCount('true');
    await t.db.sql`UPDATE weft.sweeper_repairs SET repaired_at = repaired_at - interval '10 minutes'`;
    await t.call('POST', '/v1/sweeper/run', { idle_ms: 300_000 });
    expect((await t.call('GET', `/v1/sweeper/repairs?moved=true`)).body.items).toMatchObject([
      { run_id: runId, moved: true },
    ]);
    expect(await checkedCount('true')).toBe(before + 1);
    expect((await t.call('GET', '/v1/sweeper')).body).toMatchObject({ checked_moved: 1, checked_stuck: 0 });

    const { stdout } = await run(process.execPath, [
      cli,
      'sweeper',
      'repairs',
      '--url',
      t.url,
      '--api-key',
      TEST_ADMIN_KEY,
    ]);
    expect(stdout).toContain(runId);
    expect(stdout).toContain('started b');
  });

  it('lists only the namespace of the request, and refuses a malformed filter with 400', async () => {
    const other = await t.call('GET', '/v1/sweeper/repairs', undefined, { 'x-weft-namespace': 'elsewhere' });
    expect(other).toMatchObject({ status: 200, body: { items: [], next_before: null } });
    const bad = await t.call('GET', '/v1/sweeper/repairs?run_id=nope');
    expect(bad).toMatchObject({ status: 400, body: { error: { code: expect.any(String) } } });
    const cli400 = await run(process.execPath, [
      cli,
      'sweeper',
      'repairs',
      '--before',
      'x',
      '--url',
      t.url,
    ]).catch((e: { code: number; stderr: string }) => e);
    expect(cli400).toMatchObject({ code: 1 });
  });
});
