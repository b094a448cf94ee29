import { routesOf } from '@weft/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FuzzRequest, generate } from './fuzz/requests.js';
import { type Known, Random } from './fuzz/values.js';
import { startTestServer, type TestServer } from './helpers.js';

// Requests generated from the routes' own schemas, each with one hostile change (wrong types; huge,
// negative, fractional and overflowing numbers; U+0000 and control characters; very long text; deep JSON;
// missing and extra fields; bad UUIDs; wrong content types), against a real server on PostgreSQL. No answer
// may be a 5xx, every error answer is {error: {code, message}}, and runs started before (in a namespace the
// requests do not touch) still complete, worked by a worker running all along.
// WEFT_FUZZ_SEED replays a run; WEFT_FUZZ_REQUESTS sets its size (`npm run fuzz`: a larger one).

const SEED = Number(process.env.WEFT_FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
const REQUESTS = Number(process.env.WEFT_FUZZ_REQUESTS ?? 2000);
const CONCURRENCY = 6;
const KEEP = { 'x-weft-namespace': 'fuzz-keep' };
const STEADY =
  'name: steady\nnodes:\n  - { id: a, task_type: steady.a }\n  - { id: b, task_type: steady.b, input: { prev: nodes.a.output } }\nedges:\n  - { from: a, to: b }\n';
const FUZZ =
  'name: fuzz\nnodes:\n  - { id: a, task_type: fuzz.a, retry: { max_attempts: 2, delay: 10ms } }\n';

let t: TestServer;
const known: Known = {
  strings: ['fuzz', 'a', 'fuzz.a', 'latest', 'w1', 'ann', 'concurrency', 'rate', 'quota'],
};
beforeAll(async () => {
  t = await startTestServer({}, { console: null });
  expect((await t.call('POST', '/v1/definitions', STEADY, KEEP)).status).toBe(201);
  expect((await t.call('POST', '/v1/definitions', FUZZ)).status).toBe(201);
  for (let i = 0; i < 3; i++) {
    const run = await t.call('POST', '/v1/runs', { definition: 'fuzz', input: { i } });
    known.strings.push(run.body.id);
  }
  const poll = await t.call('POST', '/v1/tasks/poll', { worker: 'w1', task_types: ['fuzz.a'], max: 3 });
  for (const task of poll.body.tasks) known.strings.push(task.task_id, task.lease_token);
});
afterAll(async () => {
  await t?.close();
});

/** Polls and reports `steady` tasks in its own namespace until stopped. */
function steadyWorker(): { stop(): Promise<void> } {
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const poll = await t.call(
        'POST',
        '/v1/tasks/poll',
        { worker: 'steady', task_types: ['steady.a', 'steady.b'], max: 5, wait_ms: 200 },
        KEEP,
      );
      const reports = poll.body.tasks.map((task: any) => ({
        run_id: task.run_id,
        task_id: task.task_id,
        attempt: task.attempt,
        lease_token: task.lease_token,
        output: { node: task.node_id },
      }));
      if (reports.length > 0) await t.call('POST', '/v1/tasks/report', { worker: 'steady', reports }, KEEP);
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
    },
  };
}

interface Outcome {
  readonly request: FuzzRequest;
  readonly status: number;
  readonly problem?: string;
}

async function send(request: FuzzRequest): Promise<Outcome> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), 30_000);
  try {
    const res = await fetch(`${t.url}${request.path}`, {
      method: request.method,
      headers: request.headers,
      ...(request.body !== undefined ? { body: request.body } : {}),
      signal: abort.signal,
    });
    if (res.headers.get('content-type')?.startsWith('text/event-stream')) {
      abort.abort(); // a live history stream: its answer was a 200
      return { request, status: res.status };
    }
    const text = await res.text();
    if (res.status >= 500)
      return { request, status: res.status, problem: `answered ${res.status}: ${text.slice(0, 300)}` };
    if (res.status >= 400) {
      const error = parse(text)?.error;
      if (typeof error?.code !== 'string' || typeof error?.message !== 'string')
        return {
          request,
          status: res.status,
          problem: `error body is not {error: {code, message}}: ${text.slice(0, 300)}`,
        };
    }
    return { request, status: res.status };
  } catch (e) {
    return { request, status: 0, problem: `no answer: ${(e as Error).message}` };
  } finally {
    clearTimeout(timer);
  }
}

function parse(text: string): any {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

describe('requests generated from the route schemas', () => {
  it(`get no 5xx and only {error: {code, message}} errors (seed ${SEED})`, {
    timeout: 120_000 + REQUESTS * 40,
  }, async () => {
    console.log(`fuzz: seed ${SEED} (WEFT_FUZZ_SEED=${SEED} replays it), ${REQUESTS} requests`);
    const routes = routesOf(t.server.app).filter((r) => r.url.startsWith('/v1/') || r.url === '/healthz');
    expect(routes.length).toBeGreaterThan(40);
    const steadyRuns: string[] = [];
    for (let i = 0; i < 5; i++)
      steadyRuns.push(
        (await t.call('POST', '/v1/runs', { definition: 'steady', input: { i } }, KEEP)).body.id,
      );
    const random = new Random(SEED);
    const requests = Array.from({ length: REQUESTS }, () => generate(random, random.pick(routes), known));
    const worker = steadyWorker();
    const outcomes: Outcome[] = [];
    const started = Date.now();
    let next = 0;
    try {
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (next < requests.length) outcomes.push(await send(requests[next++]!));
        }),
      );
    } finally {
      await worker.stop();
    }
    const seconds = (Date.now() - started) / 1000;
    report(outcomes, seconds);

    const problems = outcomes.filter((o) => o.problem);
    expect(
      problems
        .slice(0, 10)
        .map(
          (o) =>
            `${o.request.method} ${o.request.path.slice(0, 200)} [${o.request.shape}] body ${o.request.body?.slice(0, 200)}: ${o.problem}`,
        ),
      `seed ${SEED}`,
    ).toEqual([]);
    // Most requests carry the key: a fuzz answered 401 throughout would test nothing behind it.
    const unauthenticated = outcomes.filter((o) => o.status === 401).length;
    expect(unauthenticated, 'answers 401').toBeLessThan(outcomes.length * 0.1);
    expect((await t.call('GET', '/healthz')).status).toBe(200);
    const finisher = steadyWorker();
    try {
      for (const id of steadyRuns) expect(await waitForRun(id)).toBe('completed');
    } finally {
      await finisher.stop();
    }
  });
});

function report(outcomes: Outcome[], seconds: number): void {
  const byStatus = count(outcomes.map((o) => String(o.status)));
  const byShape = count(outcomes.flatMap((o) => o.request.shape.split('+')));
  console.log(
    `fuzz: ${outcomes.length} requests in ${seconds.toFixed(1)} s; answers by status ${JSON.stringify(byStatus)}; ` +
      `${Object.keys(byShape).length} shapes ${JSON.stringify(byShape)}`,
  );
}

function count(keys: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const k of keys.sort()) out[k] = (out[k] ?? 0) + 1;
  return out;
}

async function waitForRun(id: string): Promise<string> {
  for (let i = 0; i < 600; i++) {
    const run = await t.call('GET', `/v1/runs/${id}`, undefined, KEEP);
    if (run.body.status !== 'running') return run.body.status;
    await new Promise((r) => setTimeout(r, 50));
  }
  return 'still running after 30 s';
}
