import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { type Run, WeftApiError, WeftClient } from '@weft/client';
import { verifyWebhook } from '@weft/engine';
import { type RunningServer, serve } from '@weft/server';
import { createTestDatabase, serviceUrl, TEST_ADMIN_KEY, type TestDatabase } from '@weft/testing';
import { type TaskContext, TerminalError, Worker } from '@weft/worker';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The whole path, over HTTP: a server on real PostgreSQL, workers from the SDK, and every node kind that
// reaches outside a run. It runs once per dispatcher: the queue table, and Redis streams fed by the outbox
// (skipped, saying so, when Redis is not reachable).

const redisUrl = await serviceUrl('redis');
const SECRET = 'e2e-secret';
const CLI = fileURLToPath(new URL('../../cli/dist/main.js', import.meta.url));

interface Hit {
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

const ORDER = `
name: order
input_schema: { type: object, required: [id, amount] }
on_status: { url: "{{BASE}}/status" }
nodes:
  - { id: reserve, task_type: e2e.reserve, input: { id: input.id } }
  - { id: charge, task_type: e2e.charge, input: { amount: input.amount }, retry: { max_attempts: 3, delay: 50ms } }
  - { id: label, kind: sub_workflow, definition: label, input: { id: input.id } }
  - { id: notify, kind: http, method: POST, url: "'{{BASE}}/notify'", body: { id: input.id, charged: nodes.charge.output.charged } }
  - { id: audit, kind: start_workflow, definition: audit, input: { id: input.id } }
  - { id: shipped, kind: event, sink: hooks, topic: order.shipped, payload: { id: input.id, label: nodes.label.output.code } }
edges:
  - { from: reserve, to: [charge, label] }
  - { from: charge, to: notify }
  - { from: label, to: [shipped, audit] }
output: { charged: nodes.charge.output.charged, label: nodes.label.output.code, notified: nodes.notify.output.status }
`;
const LABEL = `
name: label
nodes:
  - { id: print, task_type: e2e.print, input: { id: input.id } }
output: { code: nodes.print.output }
`;
const AUDIT = `
name: audit
nodes:
  - { id: log, task_type: e2e.audit }
`;

for (const dispatcher of ['table', 'redis'] as const) {
  describe.skipIf(dispatcher === 'redis' && !redisUrl)(`end to end (${dispatcher} dispatcher)`, () => {
    let db: TestDatabase;
    let server: RunningServer;
    let client: WeftClient;
    let receiver: Server;
    let base: string;
    const hits: Hit[] = [];
    const workers: Worker[] = [];
    const namespace = `e2e_${randomBytes(3).toString('hex')}`;
    const charged = new Map<string, number>();
    // Tasks under limits: how many ran at once, by task type. Until `together` of a type have run at
    // once, each waits (10 s at most) for the others its limit allows: that the limit lets them run in
    // parallel is then shown, not left to timing.
    const inFlight = new Map<string, number>();
    const peak = new Map<string, number>();
    // Which attempts ran at once when a type went past its limit: what a failure of the limits test shows.
    const running = new Map<string, Set<string>>();
    const overlaps: string[][] = [];
    const limited = async (type: string, together: number, ctx: TaskContext) => {
      const me = `${ctx.runId}/${ctx.nodeId}#${ctx.attempt} task ${ctx.taskId}`;
      const now = running.get(type) ?? new Set<string>();
      running.set(type, now.add(me));
      if (now.size > together) overlaps.push([...now]);
      inFlight.set(type, (inFlight.get(type) ?? 0) + 1);
      peak.set(type, Math.max(peak.get(type) ?? 0, inFlight.get(type)!));
      const until = Date.now() + 10_000;
      while (peak.get(type)! < together && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
      await new Promise((r) => setTimeout(r, 150));
      inFlight.set(type, inFlight.get(type)! - 1);
      now.delete(me);
      return 'done';
    };

    beforeAll(async () => {
      db = await createTestDatabase();
      receiver = createServer((req, res) => {
        let body = '';
        req.on('data', (c) => (body += c));
        req.on('end', () => {
          hits.push({ url: req.url!, headers: req.headers, body });
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end('{"ok":true}');
        });
      });
      await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
      base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
      server = await serve({
        databaseUrl: db.url,
        port: 0,
        logLevel: 'silent',
        dispatcher,
        ...(dispatcher === 'redis' ? { redisUrl: redisUrl! } : {}),
        webhookSecret: SECRET,
        outboundAllow: '127.0.0.1',
        auth: { bootstrapAdminKey: TEST_ADMIN_KEY },
        sinks: [{ kind: 'webhook', name: 'hooks', url: `${base}/events`, secret: SECRET, timeoutMs: 5000 }],
        engine: {
          decidePollMs: 50,
          timerPollMs: 50,
          leasePollMs: 100,
          relayPollMs: 50,
          relayBackoffMs: 50,
          relayMaxAttempts: 2,
        },
      });
      client = new WeftClient({ url: server.url, namespace, apiKey: TEST_ADMIN_KEY });
      for (const [name, source] of [
        ['order', ORDER],
        ['label', LABEL],
        ['audit', AUDIT],
      ] as const) {
        const deployed = await client.deploy(source.replaceAll('{{BASE}}', base));
        expect(deployed.name).toBe(name);
      }
      for (let i = 0; i < 2; i++) {
        const worker = new Worker({
          url: server.url,
          namespace,
          apiKey: TEST_ADMIN_KEY,
          concurrency: 8,
          pollWaitMs: 1000,
          ...(redisUrl ? { redisUrl } : {}),
          handlers: {
            'e2e.reserve': (input) => ({ reserved: (input as { id: string }).id }),
            'e2e.charge': (input, ctx) => {
              const id = ctx.runId;
              charged.set(id, (charged.get(id) ?? 0) + 1);
              if (ctx.attempt === 1) throw new Error('the bank timed out');
              return { charged: (input as { amount: number }).amount };
            },
            'e2e.print': (input) => `L-${(input as { id: string }).id}`,
            'e2e.audit': () => 'logged',
            'e2e.decline': () => {
              throw new TerminalError('declined');
            },
            'e2e.limited': (_input, ctx) => limited('e2e.limited', 1, ctx),
            'e2e.capped': (_input, ctx) => limited('e2e.capped', 2, ctx),
          },
        });
        await worker.start();
        workers.push(worker);
      }
    });

    afterAll(async () => {
      await Promise.all(workers.map((w) => w.stop(5000)));
      await client?.close();
      await server?.close();
      await new Promise((r) => receiver?.close(r));
      if (dispatcher === 'redis' && redisUrl) {
        const redis = new Redis(redisUrl);
        const keys = await redis.keys(`weft:tasks:${namespace}:*`);
        if (keys.length > 0) await redis.del(...keys);
        await redis.quit();
      }
      await db?.drop();
    });

    async function finished(id: string, ms = 20_000): Promise<Run> {
      const until = Date.now() + ms;
      for (;;) {
        // A run started by a start_workflow node is created by the outbox relay, a moment after the
        // node that started it completes: until then it does not exist yet.
        const run = await client.getRun(id).catch((e: unknown) => {
          if (e instanceof WeftApiError && e.status === 404 && Date.now() < until) return null;
          throw e;
        });
        if (run && run.status !== 'running') return run;
        if (Date.now() > until) throw new Error(`run ${id} still running: ${JSON.stringify(run?.tasks)}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    }

    it('tells workers how it dispatches', async () => {
      const info = await client.dispatchInfo();
      expect(info.dispatcher).toBe(dispatcher);
    });

    it('runs orders through workers, a retry, a sub-workflow, an http call, a started run and an event', async () => {
      const runs = await Promise.all(
        Array.from({ length: 10 }, (_, i) => client.startRun('order', { id: `o${i}`, amount: 10 + i })),
      );
      const done = await Promise.all(runs.map((r) => finished(r.id)));
      for (const [i, run] of done.entries()) {
        expect(run.status, JSON.stringify(run.error)).toBe('completed');
        expect(run.output).toEqual({ charged: 10 + i, label: `L-o${i}`, notified: 200 });
        expect(charged.get(run.id)).toBe(2); // failed once, retried once
      }
      // The sub-workflow child and the started run are real runs, linked to their parent.
      const one = await client.getRun(done[0]!.id);
      const label = one.tasks.find((t) => t.node_id === 'label')!;
      const child = await client.getRun(label.child_run_id!);
      expect(child).toMatchObject({
        definition: 'label',
        status: 'completed',
        parent: { run_id: one.id, node_id: 'label' },
      });
      const audit = one.tasks.find((t) => t.node_id === 'audit')!;
      const started = await finished((audit.output as { run_id: string }).run_id);
      expect(started).toMatchObject({ definition: 'audit', status: 'completed', parent: { detached: true } });
      // The http node called out; the event and the status callback arrived, signed.
      const until = Date.now() + 10_000;
      while (hits.filter((h) => h.url === '/status').length < 10 && Date.now() < until)
        await new Promise((r) => setTimeout(r, 50));
      expect(hits.filter((h) => h.url === '/notify')).toHaveLength(10);
      const events = hits.filter((h) => h.url === '/events');
      expect(new Set(events.map((h) => JSON.parse(h.body).source.run_id)).size).toBe(10);
      const statuses = hits.filter((h) => h.url === '/status');
      expect(statuses).toHaveLength(10);
      for (const h of [...events, ...statuses])
        expect(verifyWebhook(SECRET, h.body, h.headers['x-weft-signature'] as string)).toBe(true);
      expect(JSON.parse(statuses[0]!.body)).toMatchObject({
        type: 'run.completed',
        data: { status: 'completed' },
      });
    });

    it('cancelling a parent cancels its child', async () => {
      await client.deploy('name: waits\nnodes:\n  - { id: sub, kind: sub_workflow, definition: slow }\n');
      await client.deploy('name: slow\nnodes:\n  - { id: never, task_type: e2e.nobody }\n');
      const run = await client.startRun('waits', {});
      let childId: string | null = null;
      const until = Date.now() + 10_000;
      while (!childId && Date.now() < until) {
        childId = (await client.getRun(run.id)).tasks[0]?.child_run_id ?? null;
        if (childId) {
          try {
            await client.getRun(childId);
          } catch {
            childId = null;
          }
        }
        if (!childId) await new Promise((r) => setTimeout(r, 50));
      }
      await client.cancelRun(run.id, 'not needed');
      const child = await finished(childId!);
      expect(child.status).toBe('cancelled');
    });

    it('lists and replays dead letters from the API and the CLI', async () => {
      await client.deploy('name: lost\nnodes:\n  - { id: tell, kind: event, sink: nowhere }\n');
      const run = await client.startRun('lost', {});
      await finished(run.id);
      const until = Date.now() + 10_000;
      let dead = await client.listDeadLetters({ destination: 'sink:nowhere' });
      while (dead.items.length === 0 && Date.now() < until) {
        await new Promise((r) => setTimeout(r, 50));
        dead = await client.listDeadLetters({ destination: 'sink:nowhere' });
      }
      expect(dead.items).toHaveLength(1);
      expect(dead.items[0]).toMatchObject({ run_id: run.id, kind: 'publish', attempts: 2 });
      expect(dead.items[0]!.last_error).toMatch(/no destination "sink:nowhere" is registered/);
      const cli = promisify(execFile);
      const env = {
        ...process.env,
        WEFT_URL: server.url,
        WEFT_NAMESPACE: namespace,
        NO_COLOR: '1',
        WEFT_API_KEY: TEST_ADMIN_KEY,
      };
      const listed = await cli(process.execPath, [CLI, 'dead-letters', 'list'], { env });
      expect(listed.stdout).toContain('sink:nowhere');
      const replayed = await cli(process.execPath, [CLI, 'dead-letters', 'replay', dead.items[0]!.id], {
        env,
      });
      expect(replayed.stdout).toContain('1 dead letter(s) put back for delivery');
      // Still no such sink: it fails again, and is a dead letter again; nothing is lost.
      const again = Date.now() + 10_000;
      let back = await client.listDeadLetters({ destination: 'sink:nowhere' });
      while (back.items[0]?.dead_at === dead.items[0]!.dead_at && Date.now() < again) {
        await new Promise((r) => setTimeout(r, 50));
        back = await client.listDeadLetters({ destination: 'sink:nowhere' });
      }
      expect(back.items.map((d) => d.id)).toEqual([dead.items[0]!.id]);
      expect(back.items[0]!.dead_at).not.toBe(dead.items[0]!.dead_at);
    });

    it('tasks travel the way the dispatcher says', async () => {
      const [queued] = await db.sql<{ n: number }[]>`
        SELECT count(*)::int AS n FROM weft.queue WHERE task_type NOT LIKE 'weft.%'`;
      const [ran] = await db.sql<{ n: number }[]>`
        SELECT coalesce(sum(attempt), 0)::int AS n FROM weft.tasks
        WHERE task_type LIKE 'e2e.%' AND status = 'completed'`;
      expect(ran!.n).toBeGreaterThan(0);
      if (dispatcher === 'table') {
        // Every attempt a worker ran was leased from the table: by a poll, with a report, or handed to a
        // waiting poll (a task from Redis is leased by id, which none of these count); none went to Redis.
        const stats = server.engine.context.stats;
        expect(stats.leasedByPoll + stats.leasedWithReport + stats.leasedByHandover).toBeGreaterThanOrEqual(
          ran!.n,
        );
        if (redisUrl) {
          const redis = new Redis(redisUrl);
          const streams = await redis.keys(`weft:tasks:${namespace}:*`);
          await redis.quit();
          expect(streams).toEqual([]);
        }
        return;
      }
      // Redis: nothing for workers on the queue table; task messages went through the outbox to Redis.
      expect(queued!.n).toBe(0);
      const redis = new Redis(redisUrl!);
      const length = await redis.xlen(`weft:tasks:${namespace}:e2e.reserve`);
      await redis.quit();
      expect(length).toBeGreaterThanOrEqual(10);
    });

    it('tasks under limits go through the server queue whatever the dispatcher, and their limits hold', async () => {
      await client.deploy(`name: limited
limits:
  semaphores: { e2e-one: 1 }
  concurrency: { e2e.capped: 2 }
nodes:
  - { id: one, task_type: e2e.limited, semaphores: [e2e-one] }
  - { id: two, task_type: e2e.capped }
`);
      const runs = await Promise.all(Array.from({ length: 4 }, () => client.startRun('limited', {})));
      const done = await Promise.all(runs.map((r) => finished(r.id, 30_000)));
      for (const run of done) expect(run.status, JSON.stringify(run.error)).toBe('completed');
      // Two workers, eight slots each: only the limits kept them from running all at once, and the cap
      // of two was reached.
      expect(peak.get('e2e.limited'), JSON.stringify(overlaps)).toBe(1);
      expect(peak.get('e2e.capped'), 'capped tasks running at once').toBe(2);
      if (dispatcher === 'table') return;
      // With Redis, they were never announced there: only the table's gated lease path counts limits.
      const redis = new Redis(redisUrl!);
      const lengths = await Promise.all(
        ['e2e.limited', 'e2e.capped'].map((t) => redis.xlen(`weft:tasks:${namespace}:${t}`)),
      );
      await redis.quit();
      expect(lengths).toEqual([0, 0]);
    });

    if (dispatcher === 'redis')
      it('a duplicate or stale task message is harmless', async () => {
        await client.deploy(
          'name: once\nnodes:\n  - { id: a, task_type: e2e.reserve, input: { id: input.id } }\n',
        );
        const run = await client.startRun('once', { id: 'x' });
        const done = await finished(run.id);
        expect(done.status).toBe('completed');
        const task = (await client.getRun(run.id)).tasks[0]!;
        // Replay the message by hand, twice: the task is no longer queued, so nothing is leased again.
        const redis = new Redis(redisUrl!);
        const stream = `weft:tasks:${namespace}:e2e.reserve`;
        for (let i = 0; i < 2; i++)
          await redis.xadd(stream, '*', 'id', 'dup', 'task_id', task.id, 'run_id', run.id, 'attempt', '1');
        await new Promise((r) => setTimeout(r, 500));
        const pending = (await redis.xpending(stream, 'weft-workers')) as [number, ...unknown[]];
        await redis.quit();
        expect(pending[0]).toBe(0); // read and acknowledged
        const after = await client.getRun(run.id);
        expect(after.tasks).toHaveLength(1);
        expect(after.tasks[0]).toMatchObject({
          attempt: 1,
          status: 'completed',
          finished_at: task.finished_at,
        });
        const history = await client.history(run.id);
        expect(history.events.filter((e) => e.type === 'task.completed')).toHaveLength(1);
      });
  });
}
