import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { TEST_ADMIN_KEY } from '@weft/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './helpers.js';

// Tracing across processes: a server and a worker process, each with its own OpenTelemetry SDK exporting
// OTLP/HTTP (JSON) to a receiver this test starts. One run's spans must form one chain in one trace: the
// caller's span -> the start request -> the start's decision -> each task's lease -> the worker's handler.

/** A span as the receiver got it, with the service that sent it. */
interface Got {
  readonly service: string;
  readonly name: string;
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string;
  readonly attributes: Record<string, unknown>;
  readonly links: readonly { traceId: string; spanId: string }[];
}

const spans: Got[] = [];
/** The traceparent headers the run's http node sent. */
const called: string[] = [];
let receiver: Server;
let endpoint: string;
let t: TestServer;
let worker: ChildProcess | null = null;

const attributeValue = (v: Record<string, unknown>): unknown =>
  v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : (v.boolValue ?? v.doubleValue));
const attrs = (list: { key: string; value: Record<string, unknown> }[] = []) =>
  Object.fromEntries(list.map((a) => [a.key, attributeValue(a.value)]));

/** Takes OTLP/HTTP JSON export requests and keeps their spans. */
function collect(body: string): void {
  const message = JSON.parse(body) as {
    resourceSpans: {
      resource: { attributes: { key: string; value: Record<string, unknown> }[] };
      scopeSpans: { spans: Record<string, any>[] }[];
    }[];
  };
  for (const rs of message.resourceSpans) {
    const service = String(attrs(rs.resource.attributes)['service.name']);
    for (const ss of rs.scopeSpans)
      for (const s of ss.spans)
        spans.push({
          service,
          name: s.name,
          traceId: s.traceId,
          spanId: s.spanId,
          parentSpanId: s.parentSpanId ?? '',
          attributes: attrs(s.attributes),
          links: (s.links ?? []).map((l: { traceId: string; spanId: string }) => ({
            traceId: l.traceId,
            spanId: l.spanId,
          })),
        });
  }
}

beforeAll(async () => {
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => {
      body += d.toString();
    });
    req.on('end', () => {
      if (req.url === '/v1/traces') collect(body);
      if (req.url === '/called') called.push(String(req.headers.traceparent ?? ''));
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  // Read by the batch span processor when the SDK starts: export every 100 ms, not every 5 s.
  process.env.OTEL_BSP_SCHEDULE_DELAY = '100';
  t = await startTestServer(
    {},
    {
      outboundAllow: '127.0.0.1',
      tracing: { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' },
    },
  );
});

afterAll(async () => {
  worker?.kill('SIGKILL');
  await t?.close();
  await new Promise((r) => receiver?.close(r));
});

/** Starts the worker process and waits until it polls. */
async function startWorker(): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    [fileURLToPath(new URL('./fixtures/traced-worker.mjs', import.meta.url))],
    {
      env: {
        ...process.env,
        WEFT_URL: t.url,
        WEFT_API_KEY: TEST_ADMIN_KEY,
        OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_BSP_SCHEDULE_DELAY: '100',
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      if (d.toString().includes('ready')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`the traced worker exited early (${code})`)));
  });
  return child;
}

/** Waits (generously: the machine may be loaded) until the spans received satisfy `done`. */
async function spansUntil(done: () => boolean, what: string): Promise<void> {
  const end = Date.now() + 30_000;
  while (!done()) {
    if (Date.now() > end)
      throw new Error(`no ${what} after 30 s; spans: ${spans.map((s) => s.name).join(', ')}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Starts a run under a fresh caller span and waits for it to complete; returns the run id and trace ids. */
async function tracedRun(
  definition: string,
): Promise<{ runId: string; traceId: string; callerSpan: string }> {
  const traceId = randomBytes(16).toString('hex');
  const callerSpan = randomBytes(8).toString('hex');
  const started = await t.call(
    'POST',
    '/v1/runs',
    { definition, input: {} },
    {
      traceparent: `00-${traceId}-${callerSpan}-01`,
    },
  );
  expect(started.status).toBe(201);
  const runId = started.body.id as string;
  // Started once the first run waits: its first task is leased from the queue by a poll, the next one is
  // handed to the reporting worker.
  worker ??= await startWorker();
  const end = Date.now() + 30_000;
  let run = started.body;
  while (run.status === 'running' && Date.now() < end) {
    await new Promise((r) => setTimeout(r, 50));
    run = (await t.call('GET', `/v1/runs/${runId}`)).body;
  }
  expect(run.status).toBe('completed');
  return { runId, traceId, callerSpan };
}

/** Waits until the trace has spans of each of these names (each exporter sends on its own schedule). */
async function traceHas(traceId: string, names: readonly string[]): Promise<void> {
  await spansUntil(
    () => names.every((n) => spans.some((s) => s.traceId === traceId && s.name === n)),
    names.join(', '),
  );
}

/** The one span of this name in the trace that `where` picks (failing when there is none or more). */
function one(traceId: string, name: string, where: (s: Got) => boolean = () => true): Got {
  const found = spans.filter((s) => s.name === name && s.traceId === traceId && where(s));
  expect(found.map((s) => s.name)).toEqual([name]);
  return found[0]!;
}

describe('OpenTelemetry tracing', () => {
  it('keeps a run in the trace of its start: request, decision, each task lease, the worker handler', async () => {
    await t.call(
      'POST',
      '/v1/definitions',
      'name: traced\nnodes:\n  - { id: a, task_type: trace.work }\n  - { id: b, task_type: trace.work }\nedges:\n  - { from: a, to: b }\n',
    );
    const { runId, traceId, callerSpan } = await tracedRun('traced');

    const handlerOf = (node: string) =>
      spans.find((s) => s.name === 'weft.handle trace.work' && s.attributes['weft.node.id'] === node);
    await spansUntil(() => handlerOf('a') !== undefined && handlerOf('b') !== undefined, 'handler spans');
    await traceHas(traceId, ['POST /v1/runs', 'weft.decide start', 'weft.task trace.work']);
    await spansUntil(
      () => spans.filter((s) => s.traceId === traceId && s.name === 'weft.task trace.work').length === 2,
      'both leases',
    );
    const request = one(traceId, 'POST /v1/runs');
    expect(request.parentSpanId).toBe(callerSpan);
    expect(request.service).toBe('weft-server');
    expect(request.attributes['http.request.method']).toBe('POST');
    expect(request.attributes['http.route']).toBe('/v1/runs');
    expect(request.attributes['http.response.status_code']).toBe(201);
    const decision = one(traceId, 'weft.decide start');
    expect(decision.parentSpanId).toBe(request.spanId);
    expect(decision.attributes['weft.run.id']).toBe(runId);
    expect(decision.attributes['weft.definition']).toBe('traced');
    for (const node of ['a', 'b']) {
      const lease = one(traceId, 'weft.task trace.work', (s) => s.attributes['weft.node.id'] === node);
      expect(lease.parentSpanId).toBe(decision.spanId);
      expect(lease.attributes).toMatchObject({ 'weft.run.id': runId, 'weft.task.attempt': 1 });
      const handler = handlerOf(node)!;
      expect(handler.service).toBe('weft-test-worker');
      expect(handler.traceId).toBe(traceId);
      expect(handler.parentSpanId).toBe(lease.spanId);
      expect(handler.attributes).toMatchObject({ 'weft.run.id': runId, 'weft.task.type': 'trace.work' });
    }
    // A's report decided b: that decision belongs to the report's request, and links to the run's trace.
    await spansUntil(
      () => spans.some((s) => s.name === 'weft.decide report' && s.attributes['weft.run.id'] === runId),
      'report decision',
    );
    const reports = spans.filter(
      (s) => s.name === 'weft.decide report' && s.attributes['weft.run.id'] === runId,
    );
    for (const r of reports) expect(r.links).toContainEqual({ traceId, spanId: decision.spanId });
  });

  it('traces system tasks and outbox deliveries, and keeps a child run in the trace of its parent', async () => {
    await t.call(
      'POST',
      '/v1/definitions',
      'name: traced_child\nnodes:\n  - { id: c, task_type: trace.work }\n',
    );
    await t.call(
      'POST',
      '/v1/definitions',
      `name: traced_more\nnodes:\n  - { id: call, kind: http, method: GET, url: "'${endpoint}/called'" }\n  - { id: child, kind: sub_workflow, definition: traced_child }\nedges:\n  - { from: call, to: child }\n`,
    );
    const { runId, traceId } = await tracedRun('traced_more');
    await traceHas(traceId, [
      'weft.decide start',
      'weft.task weft.http',
      'weft.handle weft.http',
      'weft.task trace.work',
    ]);
    await spansUntil(
      () =>
        spans.some(
          (s) => s.name === 'weft.outbox.deliver weft.runs' && s.attributes['weft.run.id'] === runId,
        ),
      'outbox delivery',
    );
    const decision = one(traceId, 'weft.decide start', (s) => s.attributes['weft.run.id'] === runId);
    await spansUntil(
      () => spans.some((s) => s.traceId === traceId && s.name === 'weft.handle trace.work'),
      'child handler',
    );
    const lease = one(traceId, 'weft.task weft.http');
    expect(lease.parentSpanId).toBe(decision.spanId);
    const http = one(traceId, 'weft.handle weft.http');
    expect(http.parentSpanId).toBe(lease.spanId);
    expect(http.attributes['weft.node.id']).toBe('call');
    // The called service got the http task's span as its parent.
    expect(called).toContain(`00-${traceId}-${http.spanId}-01`);
    // The child run was started through the outbox, and stays in its parent's trace.
    expect(
      spans.some((s) => s.name === 'weft.outbox.deliver weft.runs' && s.attributes['weft.run.id'] === runId),
    ).toBe(true);
    const childLease = one(traceId, 'weft.task trace.work');
    expect(childLease.attributes['weft.run.id']).not.toBe(runId);
    expect(childLease.parentSpanId).toBe(decision.spanId);
    expect(one(traceId, 'weft.handle trace.work').parentSpanId).toBe(childLease.spanId);
  });

  it("decides a run's timer in the run's trace, under its start", async () => {
    await t.call(
      'POST',
      '/v1/definitions',
      'name: traced_wait\nnodes:\n  - { id: w, kind: wait, duration: 100ms }\n  - { id: after, task_type: trace.work }\nedges:\n  - { from: w, to: after }\n',
    );
    const { runId, traceId } = await tracedRun('traced_wait');
    await spansUntil(
      () => spans.some((s) => s.traceId === traceId && s.name === 'weft.decide decider'),
      "the timer's decision",
    );
    const start = one(traceId, 'weft.decide start', (s) => s.attributes['weft.run.id'] === runId);
    // Every background decision of the run (the timer's, and any the decider takes again) is under its start.
    const background = spans.filter((s) => s.traceId === traceId && s.name === 'weft.decide decider');
    for (const d of background) {
      expect(d.parentSpanId).toBe(start.spanId);
      expect(d.attributes).toMatchObject({ 'weft.run.id': runId, 'weft.decision.source': 'decider' });
      expect(d.links).toEqual([]);
    }
  });
});
