import { readFileSync } from 'node:fs';
import { TEST_AUTH_HEADERS } from '@weft/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './helpers.js';
import { families, type Sample, samples, sampleValue } from './prometheus-text.js';
import { dashboardExpressions, metricNames } from './promql-names.js';

// GET /metrics on a real server and database, after real runs: the labelled counters, the histograms and
// the workload gauges read from PostgreSQL.

const CHAIN = `
name: metered
nodes:
  - { id: a, task_type: metrics.a }
  - { id: b, task_type: metrics.b, input: { from: nodes.a.output.n } }
edges:
  - { from: a, to: b }
`;
const IDLE = 'name: idle\nnodes:\n  - { id: wait, task_type: metrics.idle }\n';
const ASK = 'name: ask\nnodes:\n  - { id: ok, kind: human, title: OK? }\n';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
  for (const source of [CHAIN, IDLE, ASK])
    expect((await t.call('POST', '/v1/definitions', source)).status).toBe(201);
});
afterAll(async () => {
  await t?.close();
});

async function scrape(): Promise<{ text: string; all: Sample[] }> {
  const res = await fetch(`${t.url}/metrics`, { headers: TEST_AUTH_HEADERS });
  expect(res.status).toBe(200);
  const text = await res.text();
  return { text, all: samples(text) };
}

/** Scrapes until `check` holds (the workload gauges are cached for a few seconds). */
async function scrapeUntil(check: (all: Sample[]) => boolean, what: string): Promise<Sample[]> {
  const until = Date.now() + 30_000;
  for (;;) {
    const { all } = await scrape();
    if (check(all)) return all;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

async function work(type: string, output: unknown) {
  const poll = await t.call('POST', '/v1/tasks/poll', {
    worker: 'm',
    task_types: [type],
    max: 1,
    wait_ms: 5000,
  });
  const [task] = poll.body.tasks;
  expect(task, `a task of type ${type}`).toBeDefined();
  const report = {
    run_id: task.run_id,
    task_id: task.task_id,
    attempt: task.attempt,
    lease_token: task.lease_token,
  };
  const done = await t.call('POST', '/v1/tasks/report', { worker: 'm', reports: [{ ...report, output }] });
  expect(done.body.results[0].accepted).toBe(true);
}

/** Starts a run of `metered` and works both its tasks; returns its id once it has completed. */
async function completedRun(): Promise<string> {
  const started = await t.call('POST', '/v1/runs', { definition: 'metered', input: {} });
  expect(started.status).toBe(201);
  await work('metrics.a', { n: 1 });
  await work('metrics.b', { ok: true });
  const run = await t.call('GET', `/v1/runs/${started.body.id}`);
  expect(run.body.status).toBe('completed');
  return started.body.id;
}

describe('GET /metrics', () => {
  it('counts runs and times tasks, steps, decisions and requests, by bounded labels', async () => {
    const started = await completedRun();
    const { all, text } = await scrape();
    const ofRun = { namespace: 'default', definition: 'metered' };
    expect(sampleValue(all, 'weft_runs_started_total', ofRun)).toBe(1);
    expect(sampleValue(all, 'weft_runs_finished_total', { ...ofRun, status: 'completed' })).toBe(1);
    expect(sampleValue(all, 'weft_run_duration_seconds_count', { ...ofRun, status: 'completed' })).toBe(1);
    for (const type of ['metrics.a', 'metrics.b']) {
      const task = { task_type: type, status: 'completed' };
      expect(sampleValue(all, 'weft_task_duration_seconds_count', task), type).toBe(1);
      expect(sampleValue(all, 'weft_task_queue_wait_seconds_count', { task_type: type }), type).toBe(1);
    }
    // b followed a's end; a started the run, which is a step too (from the start to its first task).
    expect(sampleValue(all, 'weft_step_latency_seconds_count', { task_type: 'metrics.b' })).toBe(1);
    expect(sampleValue(all, 'weft_decision_transaction_seconds_count')).toBeGreaterThanOrEqual(3);
    const runRoute = { method: 'GET', route: '/v1/runs/:id', status: '200' };
    expect(sampleValue(all, 'weft_http_request_duration_seconds_count', runRoute)).toBeGreaterThanOrEqual(1);
    // Routes are labelled by pattern, never by URL: no run id is ever a label value; a URL no route matches
    // is (unmatched).
    expect((await t.call('GET', '/v1/no-such-route/12345')).status).toBe(404);
    const unmatched = { route: '(unmatched)', status: '404' };
    const after = (await scrape()).all;
    expect(sampleValue(after, 'weft_http_request_duration_seconds_count', unmatched)).toBeGreaterThanOrEqual(
      1,
    );
    expect(after.filter((s) => s.labels.route?.includes('12345'))).toEqual([]);
    const routes = all.filter((s) => s.name === 'weft_http_request_duration_seconds_count');
    expect(routes.filter((s) => s.labels.route?.includes(started))).toEqual([]);
    // Node.js's default metrics keep their standard names.
    expect(families(text)).toContain('process_cpu_user_seconds_total');
    expect(families(text)).toContain('nodejs_eventloop_lag_seconds');
    expect(families(text).filter((f) => /^weft_(process|nodejs)_/.test(f))).toEqual([]);
  });

  it('counts the statements the server sends to PostgreSQL', async () => {
    const before = sampleValue((await scrape()).all, 'weft_db_statements_total') ?? 0;
    await completedRun();
    const sent = sampleValue((await scrape()).all, 'weft_db_statements_total')! - before;
    // A start, two polls, two reports and a read: each a transaction or a read of a few statements (and the
    // background loops' statements meanwhile), not none and not hundreds.
    expect(sent).toBeGreaterThanOrEqual(12);
    expect(sent).toBeLessThan(400);
  });

  it('reads queued and running tasks, open human tasks and due timers from PostgreSQL', async () => {
    await t.call('POST', '/v1/runs', { definition: 'idle', input: {} });
    await t.call('POST', '/v1/runs', { definition: 'ask', input: {} });
    const all = await scrapeUntil(
      (s) =>
        sampleValue(s, 'weft_tasks_queued', { namespace: 'default', task_type: 'metrics.idle' }) === 1 &&
        sampleValue(s, 'weft_human_tasks_open', { namespace: 'default' }) === 1,
      'the queued task and the open human task',
    );
    const queued = { namespace: 'default', task_type: 'metrics.idle' };
    expect(sampleValue(all, 'weft_tasks_queued_oldest_age_seconds', queued)).toBeGreaterThanOrEqual(0);
    expect(sampleValue(all, 'weft_timers_due')).toBe(0);
    // Leased and not yet reported: running, and no longer queued.
    const poll = await t.call('POST', '/v1/tasks/poll', {
      worker: 'm',
      task_types: ['metrics.idle'],
      max: 1,
    });
    expect(poll.body.tasks).toHaveLength(1);
    await scrapeUntil(
      (s) =>
        sampleValue(s, 'weft_tasks_running', { task_type: 'metrics.idle' }) === 1 &&
        sampleValue(s, 'weft_tasks_queued', queued) === undefined,
      'the leased task counted as running',
    );
  });

  it('counts decisions that changed nothing', async () => {
    const before = sampleValue((await scrape()).all, 'weft_decisions_unchanged_total') ?? 0;
    // A decision asked for a run waiting on a person, with nothing in its inbox: a wasted pass.
    const waiting = await t.call('POST', '/v1/runs', { definition: 'ask', input: {} });
    expect(waiting.status).toBe(201);
    await t.db.sql`INSERT INTO weft.decide_queue (run_id, reason) VALUES (${waiting.body.id}, 'test')`;
    await scrapeUntil(
      (s) => (sampleValue(s, 'weft_decisions_unchanged_total') ?? 0) > before,
      'the unchanged decision counted',
    );
  });
});

describe('docs/operations/grafana-dashboard.json', () => {
  it('selects only metrics a server serves, in expressions that parse as PromQL', async () => {
    // A run has completed, so the labelled series exist, not only their families.
    const done = await t.call('GET', '/v1/runs?status=completed');
    if (done.body.items.length === 0) await completedRun();
    const { text, all } = await scrape();
    const served = new Set([...families(text), ...all.map((s) => s.name)]);
    const file = new URL('../../../docs/operations/grafana-dashboard.json', import.meta.url);
    const exprs = dashboardExpressions(JSON.parse(readFileSync(file, 'utf8')));
    expect(exprs.length).toBeGreaterThan(20);
    const named = exprs.flatMap((e) => {
      const names = metricNames(e);
      expect(names.length, `an expression that selects no metric: ${e}`).toBeGreaterThan(0);
      return names;
    });
    expect(
      [...new Set(named.filter((n) => !served.has(n)))],
      'metrics the dashboard names that /metrics lacks',
    ).toEqual([]);
    // Every metric family of Weft's own appears on the dashboard, but for the plain engine counters.
    const shown = new Set(named.map((n) => n.replace(/_(bucket|count|sum)$/, '')));
    const labelled = families(text).filter((f) => /^weft_/.test(f) && text.includes(`# TYPE ${f} histogram`));
    expect(
      labelled.filter((f) => !shown.has(f)),
      'histograms missing from the dashboard',
    ).toEqual([]);
  });

  it('the name check finds a metric that does not exist, and a broken expression', () => {
    expect(metricNames('sum(rate(weft_nope_total{a="b"}[$__rate_interval])) / 2')).toEqual([
      'weft_nope_total',
    ]);
    expect(() => metricNames('sum(rate(weft_runs_started_total[5m])')).toThrow(/not PromQL/);
  });
});
