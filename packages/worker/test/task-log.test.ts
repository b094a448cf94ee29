import { TEST_ADMIN_KEY } from '@weft/testing';
import { type Handler, Worker } from '@weft/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../server/test/helpers.js';

// ctx.log: a handler's lines are buffered, sent before the attempt's report, fenced by the lease, bounded.

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ heartbeatMs: 200, leaseMs: 5000 });
});
afterAll(async () => {
  await t?.close();
});

async function eventually<T>(check: () => Promise<T | undefined>, what: string, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function finished(id: string) {
  return eventually(async () => {
    const run = (await t.call('GET', `/v1/runs/${id}`)).body;
    return ['completed', 'failed', 'cancelled'].includes(run.status) ? run : undefined;
  }, `run ${id} to finish`);
}

async function logsOf(
  id: string,
): Promise<{ message: string; level: string; attempt: number; fields: unknown }[]> {
  const lines: { message: string; level: string; attempt: number; fields: unknown }[] = [];
  let after: string | null = null;
  do {
    const page: { lines: never[]; next_after: string | null } = (
      await t.call('GET', `/v1/runs/${id}/logs?limit=1000${after ? `&after=${after}` : ''}`)
    ).body;
    lines.push(...page.lines);
    after = page.next_after;
  } while (after);
  return lines;
}

async function withWorker(
  handlers: Record<string, Handler>,
  fn: (w: Worker) => Promise<void>,
  problems: string[] = [],
) {
  const worker = new Worker({
    url: t.url,
    apiKey: TEST_ADMIN_KEY,
    handlers,
    logger: null,
    onProblem: (m) => problems.push(m),
  });
  await worker.start();
  try {
    await fn(worker);
  } finally {
    await worker.stop(5000);
  }
}

async function start(definition: string, input: unknown = {}): Promise<string> {
  return (await t.call('POST', '/v1/runs', { definition, input })).body.id;
}

describe('ctx.log', { timeout: 120_000 }, () => {
  it('sends the lines before the report, with their fields, and nothing for a task that logs nothing', async () => {
    await t.call(
      'POST',
      '/v1/definitions',
      'name: logs1\nnodes:\n  - { id: a, task_type: log.a }\n  - { id: b, task_type: log.quiet }\nedges:\n  - { from: a, to: b }\n',
    );
    await withWorker(
      {
        'log.a': (_input, ctx) => {
          ctx.log.info('charging', { amount: 5 });
          ctx.log.error('declined once', { code: 'x' });
          return 'ok';
        },
        'log.quiet': () => 'quiet',
      },
      async (worker) => {
        const id = await start('logs1');
        expect((await finished(id)).status).toBe('completed');
        // Read once, at once: the lines went before the report that completed the run.
        const lines = await logsOf(id);
        expect(lines.map((l) => [l.level, l.message, l.fields])).toEqual([
          ['info', 'charging', { amount: 5 }],
          ['error', 'declined once', { code: 'x' }],
        ]);
        // The quiet task made no log request: not one before the first line of a handler made the client.
        const quiet = new Worker({ url: t.url, apiKey: TEST_ADMIN_KEY, handlers: { 'log.none': () => 1 } });
        expect((quiet as unknown as { logs: unknown }).logs).toBeNull();
        expect((worker as unknown as { logs: unknown }).logs).not.toBeNull();
      },
    );
  });

  it('drops the lines of an attempt whose lease was lost; the server kept none of them', async () => {
    await t.call('POST', '/v1/definitions', 'name: logs2\nnodes:\n  - { id: a, task_type: log.lost }\n');
    const problems: string[] = [];
    let id = '';
    await withWorker(
      {
        'log.lost': async (_input, ctx) => {
          ctx.log.info('before the cancel');
          await eventually(
            async () => ((await logsOf(ctx.runId)).length === 1 ? true : undefined),
            'the first line',
          );
          await t.call('POST', `/v1/runs/${ctx.runId}/cancel`, { reason: 'testing' });
          // The heartbeat finds the lease lost and aborts the handler; what it logs then is refused.
          await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }));
          ctx.log.warn('after the cancel');
          await new Promise((r) => setTimeout(r, 1500));
          ctx.log.warn('long after the cancel');
          throw new Error('stopped');
        },
      },
      async () => {
        id = await start('logs2');
        expect((await finished(id)).status).toBe('cancelled');
        // The heartbeat that finds the lease lost, the handler's last 1.5 s, its lines and its report: seen
        // taking over 30 s on two cores running two test suites at once.
        await eventually(
          async () => (problems.some((p) => /report for task .* was refused/.test(p)) ? true : undefined),
          'the refused report',
          90_000,
        );
      },
      problems,
    );
    expect((await logsOf(id)).map((l) => l.message)).toEqual(['before the cancel']);
    // Refused lines are the lease's end, not a problem to log.
    expect(problems.filter((p) => /log line/.test(p))).toEqual([]);
  }, 150_000);

  it('keeps 1,000 lines of an attempt and says the rest were truncated', async () => {
    await t.call('POST', '/v1/definitions', 'name: logs3\nnodes:\n  - { id: a, task_type: log.many }\n');
    await withWorker(
      {
        'log.many': (_input, ctx) => {
          for (let i = 0; i < 1200; i++) ctx.log.debug(`line ${i}`);
          return null;
        },
      },
      async () => {
        const id = await start('logs3');
        expect((await finished(id)).status).toBe('completed');
        const lines = await logsOf(id);
        expect(lines).toHaveLength(1001);
        // In the order they were written, across pages (ids past 999 included).
        expect(lines.slice(0, 1000).map((l) => l.message)).toEqual(
          Array.from({ length: 1000 }, (_, i) => `line ${i}`),
        );
        expect(lines[999]!.message).toBe('line 999');
        expect(lines[1000]).toMatchObject({
          level: 'warn',
          message: expect.stringMatching(/^log truncated/),
        });
      },
    );
  });
});
