import { request as httpRequest } from 'node:http';
import { SseParser } from '@weft/client';
import { Engine } from '@weft/engine';
import { PgStore } from '@weft/postgres';
import { buildApp } from '@weft/server';
import { createTestDatabase, type TestDatabase } from '@weft/testing';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// A run's history streamed over SSE: a client that is cut off (anywhere, even in the middle of an event)
// and reconnects with Last-Event-ID receives every event exactly once, in order, while workers keep
// writing events on other connections. The stream reads "seq > last id" and seq is gap-free and commits
// in order under the run lock; the client counts an event only once its blank line has arrived.

const STEPS = 12;
const CHAIN = `
name: streamed
nodes:
${Array.from({ length: STEPS }, (_, i) => `  - { id: s${i}, task_type: sse.step }`).join('\n')}
edges:
${Array.from({ length: STEPS - 1 }, (_, i) => `  - { from: s${i}, to: s${i + 1} }`).join('\n')}
`;

let db: TestDatabase;
let server: Engine;
let worker: Engine;
let app: FastifyInstance;
let base: string;

beforeAll(async () => {
  db = await createTestDatabase();
  server = new Engine({
    store: new PgStore(db.pool(4)),
    config: { decidePollMs: 20, crossProcessWakeups: false },
  });
  // The worker's reports go through another engine on other connections: the stream sees its events
  // through the poll, not through this process's wake-ups.
  worker = new Engine({
    store: new PgStore(db.pool(3)),
    config: { backgroundLoops: false, crossProcessWakeups: false },
  });
  await server.start();
  await worker.start();
  // Streams, in process: who may call is authorization.test.ts's subject.
  app = buildApp({ engine: server, historyPollMs: 20, auth: { mode: 'off' } });
  base = await app.listen({ host: '127.0.0.1', port: 0 });
  await server.definitions.deploy('default', CHAIN);
});
afterAll(async () => {
  await app?.close();
  await server?.stop();
  await worker?.stop();
  await db?.drop();
});

/** The run's progress, as the stream sends it after each burst of events. */
interface Progress {
  run_id: string;
  status: string;
  known: number;
  completed: number;
  failed: number;
  running: number;
}

/**
 * Reads the stream from `lastId` and hangs up after `cutAfterBytes` bytes (possibly in the middle of an
 * event), or when `stop` says so. Returns the complete events received and the id to resume from.
 */
function readStream(
  runId: string,
  lastId: string,
  cutAfterBytes: number,
  stop: (lastId: string) => boolean,
): Promise<{ seqs: number[]; lastId: string; bytes: number; progress: Progress[] }> {
  return new Promise((resolve, reject) => {
    const parser = new SseParser(lastId);
    const seqs: number[] = [];
    const progress: Progress[] = [];
    let bytes = 0;
    const req = httpRequest(`${base}/v1/runs/${runId}/events`, {
      headers: { accept: 'text/event-stream', 'last-event-id': lastId },
    });
    const finish = () => {
      req.destroy();
      resolve({ seqs, lastId: parser.lastId ?? lastId, bytes, progress });
    };
    req.on('response', (res) => {
      if (res.statusCode !== 200) return reject(new Error(`status ${res.statusCode}`));
      res.on('data', (chunk: Buffer) => {
        const room = cutAfterBytes - bytes;
        const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
        bytes += part.length;
        for (const m of parser.push(part.toString('utf8'))) {
          // History events are the unnamed ones; `progress` events carry the run's counts.
          if (m.event === 'progress') progress.push(JSON.parse(m.data) as Progress);
          else seqs.push((JSON.parse(m.data) as { seq: number }).seq);
        }
        if (bytes >= cutAfterBytes || stop(parser.lastId ?? lastId)) finish();
      });
      res.on('end', finish);
    });
    req.on('error', (e) => (req.destroyed ? undefined : reject(e)));
    req.end();
  });
}

describe('history over SSE', () => {
  it('a client that disconnects and reconnects receives every event exactly once', async () => {
    const run = await server.runs.start({ namespace: 'default', definition: 'streamed', input: {} });
    let finished = false;
    const working = (async () => {
      for (let done = 0; done < STEPS; ) {
        const tasks = await worker.tasks.poll({
          namespace: 'default',
          worker: 'w',
          taskTypes: ['sse.step'],
          max: 1,
          waitMs: 200,
        });
        for (const t of tasks) {
          await new Promise((r) => setTimeout(r, 30 + Math.random() * 60));
          await worker.tasks.report({
            namespace: 'default',
            worker: 'w',
            reports: [
              {
                runId: t.runId,
                taskId: t.id,
                attempt: t.attempt,
                leaseToken: t.leaseToken,
                outcome: { kind: 'completed', output: { step: t.nodeId } },
              },
            ],
          });
          done++;
        }
      }
      finished = true;
    })();

    const received: number[] = [];
    let lastId = '0';
    let connections = 0;
    let cutsWhileRunning = 0;
    // Expected events: run.started, then scheduled and completed per step, then run.completed.
    const total = 2 + 2 * STEPS;
    // Until the stream has delivered the last event (the run's completion), whatever was received.
    while (Number(lastId) < total) {
      connections++;
      // Cut each connection after a random number of bytes: often inside an event.
      const cut = 40 + Math.floor(Math.random() * 400);
      const got = await readStream(run.id, lastId, cut, (id) => Number(id) >= total);
      received.push(...got.seqs);
      if (!finished) cutsWhileRunning++;
      lastId = got.lastId;
      if (connections > 500) throw new Error('too many reconnections');
    }
    await working;

    const stored = await server.context.store.readHistory(run.id, 0, 1000);
    expect(stored).toHaveLength(total);
    expect(received).toEqual(stored.map((e) => e.seq));
    expect(new Set(received).size).toBe(received.length);
    expect(connections).toBeGreaterThan(3);
    expect(cutsWhileRunning).toBeGreaterThan(1);
  });

  it("sends the run's progress after each burst of events, without an id", async () => {
    const run = await server.runs.start({ namespace: 'default', definition: 'streamed', input: {} });
    const [first] = await worker.tasks.poll({
      namespace: 'default',
      worker: 'w',
      taskTypes: ['sse.step'],
      max: 1,
      waitMs: 5000,
    });
    expect(first?.runId).toBe(run.id);
    await worker.tasks.report({
      namespace: 'default',
      worker: 'w',
      reports: [
        {
          runId: run.id,
          taskId: first!.id,
          attempt: first!.attempt,
          leaseToken: first!.leaseToken,
          outcome: { kind: 'completed', output: null },
        },
      ],
    });
    // Read until the progress after s0's completion arrives: one step done, the next one running.
    const abort = new AbortController();
    const response = await fetch(`${base}/v1/runs/${run.id}/events`, { signal: abort.signal });
    const parser = new SseParser('0');
    const seqs: number[] = [];
    let seen: { progress: Progress; id: string | null } | null = null;
    const decoder = new TextDecoder();
    for await (const chunk of response.body!) {
      for (const m of parser.push(decoder.decode(chunk as Uint8Array, { stream: true }))) {
        if (m.event !== 'progress') seqs.push((JSON.parse(m.data) as { seq: number }).seq);
        else if ((JSON.parse(m.data) as Progress).completed === 1)
          seen = { progress: JSON.parse(m.data), id: m.id };
      }
      if (seen) break;
    }
    abort.abort();
    expect(seen?.progress).toEqual({
      run_id: run.id,
      status: 'running',
      known: 2,
      completed: 1,
      failed: 0,
      running: 1,
    });
    // It carries no id of its own: resuming from the last id received still resumes after history.
    expect(seen?.id).toBe(String(seqs.at(-1)));
  });

  it('answers 404 for an unknown run and 400 for a bad Last-Event-ID, before streaming', async () => {
    const missing = await app.inject({
      method: 'GET',
      url: '/v1/runs/01900000-0000-7000-8000-000000000009/events',
    });
    expect(missing.statusCode).toBe(404);
    const run = await server.runs.start({ namespace: 'default', definition: 'streamed', input: {} });
    const bad = await app.inject({
      method: 'GET',
      url: `/v1/runs/${run.id}/events`,
      headers: { 'last-event-id': 'yesterday' },
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ error: { code: 'bad_request' } });
  });
});
