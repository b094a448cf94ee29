import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WeftClient } from '@weft/client';
import { type EmbeddedDatabase, freePort, startEmbedded } from '@weft/postgres';
import { TEST_ADMIN_KEY } from '@weft/testing';
import { Worker } from '@weft/worker';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  alive,
  get,
  postmasterPid,
  type ServerProcess,
  startServerProcess,
  waitFor,
} from './restart-helpers.js';

// PostgreSQL stops under a running server (fast and immediate shutdown, as `pg_ctl stop -m fast|immediate`
// sends) and comes back after a while. The server process stays up, says it is not ready while the database
// is gone, reconnects by itself, and every run completes with a gap-free history and each step accepted
// once. The test starts, stops and restarts a PostgreSQL of its own, on a port of its own.

const FLOW = `
name: restart_chain
nodes:
  - { id: a, task_type: restart.step }
  - { id: b, task_type: restart.step }
  - { id: c, task_type: restart.step }
edges:
  - { from: a, to: b }
  - { from: b, to: c }
output: { done: nodes.c.output }
`;
const RUNS = 30;
const OUTAGE_MS = 10_000;

describe('PostgreSQL restarts under a running server', () => {
  const dataDir = join(tmpdir(), `weft-restart-${randomBytes(4).toString('hex')}`);
  let port: number;
  let httpPort: number;
  let pg: EmbeddedDatabase;
  let server: ServerProcess;
  let client: WeftClient;
  let worker: Worker;
  const problems: string[] = [];

  beforeAll(async () => {
    port = await freePort();
    pg = await startEmbedded({ dataDir, port });
    httpPort = await freePort();
    server = await startServerProcess(pg.url, httpPort);
    client = new WeftClient({ url: server.url, apiKey: TEST_ADMIN_KEY });
    await client.deploy(FLOW);
    worker = new Worker({
      url: server.url,
      apiKey: TEST_ADMIN_KEY,
      handlers: {
        'restart.step': async () => {
          await new Promise((r) => setTimeout(r, 50));
          return 'ok';
        },
      },
      concurrency: 8,
      pollWaitMs: 1000,
      onProblem: (m) => problems.push(m),
    });
    await worker.start();
  });

  afterAll(async () => {
    await worker?.stop(5000);
    await client?.close();
    await server?.stop();
    await pg?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  for (const mode of ['fast', 'immediate'] as const) {
    test(`${mode} shutdown for ${OUTAGE_MS / 1000} s: the server rides it out`, async () => {
      const started = await client.startRuns(
        'restart_chain',
        Array.from({ length: RUNS }, (_, i) => ({ i })),
      );
      const ids = started.items.map((r) => ('id' in r ? r.id : ''));
      expect(ids.every(Boolean)).toBe(true);
      // Some steps done, not all: runs are in flight when PostgreSQL goes.
      await waitFor('the first steps', () => worker.stats.completed > 0, 30_000, 10);
      const pgdata = join(dataDir, 'pgdata');
      const pid = await postmasterPid(pgdata);
      process.kill(pid, mode === 'fast' ? 'SIGINT' : 'SIGQUIT');
      await waitFor('PostgreSQL to stop', () => !alive(pid), 30_000);
      const down = Date.now();
      await waitFor(
        'readyz to say the database is unavailable',
        async () => {
          const r = await get(`${server.url}/readyz`);
          return r.status === 503 && r.body?.error?.code === 'database_unavailable';
        },
        OUTAGE_MS,
      );
      expect((await get(`${server.url}/livez`)).status).toBe(200);
      await new Promise((r) => setTimeout(r, Math.max(0, OUTAGE_MS - (Date.now() - down))));
      pg = await startEmbedded({ dataDir, port });
      const outage = Date.now() - down;
      const readyAfter = await waitFor(
        'readyz to answer 200',
        async () => (await get(`${server.url}/readyz`)).status === 200,
        60_000,
      );
      const completedAfter = await waitFor(
        'every run to complete',
        async () => {
          const runs = await Promise.all(ids.map((id) => client.getRun(id)));
          return runs.every((r) => r.status === 'completed');
        },
        120_000,
        500,
      );
      for (const id of ids) {
        const { events } = await client.history(id, 0, 1000);
        expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
        const accepted = events.filter((e) => e.type === 'task.completed').map((e) => e.node_id);
        expect(accepted.sort()).toEqual(['a', 'b', 'c']);
      }
      expect(server.child.exitCode).toBeNull();
      console.log(
        `database restart (${mode}): ${RUNS} runs, outage ${outage} ms, ready ${readyAfter} ms after PostgreSQL was back, all runs completed ${completedAfter} ms after that; worker problems: ${problems.length}`,
      );
    }, 240_000);
  }

  test('a server restart: the worker retries with backoff and every run completes', async () => {
    const started = await client.startRuns(
      'restart_chain',
      Array.from({ length: RUNS }, (_, i) => ({ i })),
    );
    const ids = started.items.map((r) => ('id' in r ? r.id : ''));
    await waitFor('the first steps', () => worker.stats.completed > 0, 30_000, 10);
    const before = problems.length;
    expect(await server.stop()).toBe(0);
    const down = Date.now();
    await waitFor('the worker to notice', () => problems.length > before, 30_000);
    server = await startServerProcess(pg.url, httpPort);
    const outage = Date.now() - down;
    const completedAfter = await waitFor(
      'every run to complete',
      async () =>
        (await Promise.all(ids.map((id) => client.getRun(id)))).every((r) => r.status === 'completed'),
      120_000,
      500,
    );
    for (const id of ids) {
      const { events } = await client.history(id, 0, 1000);
      expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
      expect(events.filter((e) => e.type === 'task.completed').length).toBe(3);
    }
    console.log(
      `server restart: ${RUNS} runs, server away ${outage} ms, all runs completed ${completedAfter} ms after it was back; worker problems: ${problems.length - before}`,
    );
  }, 240_000);
});
