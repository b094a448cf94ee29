import { TEST_AUTH_HEADERS } from '@weft/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './helpers.js';

// Closing a server (what SIGTERM does in `weft server`) with a worker's poll waiting and a history stream
// open: the poll answers at once with no tasks, the stream ends, and close() resolves without waiting for
// either to run out. The process-level test (signals, exit codes, a request in flight) is in
// packages/cli/test/graceful-shutdown.test.ts.

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t?.db.drop();
});

/** Rejects when `promise` has not settled within `ms`: a bound for what never comes, not a measure. */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms);
  });
  return Promise.race([promise, bound]).finally(() => clearTimeout(timer));
}

describe('closing a server', () => {
  it('answers a waiting poll with no tasks, ends history streams and closes without waiting for them', async () => {
    expect(
      (
        await t.call(
          'POST',
          '/v1/definitions',
          'name: drained\nnodes:\n  - { id: a, task_type: drained.a }\n',
        )
      ).status,
    ).toBe(201);
    const run = await t.call('POST', '/v1/runs', { definition: 'drained', input: {} });
    const auth = TEST_AUTH_HEADERS;
    const stream = await fetch(`${t.url}/v1/runs/${run.body.id}/events`, { headers: auth });
    const reader = stream.body!.getReader();
    await reader.read(); // the stream is open: its first bytes arrived
    const streamEnded = (async () => {
      for (;;) if ((await reader.read()).done) return true;
    })();
    const poll = t.call('POST', '/v1/tasks/poll', {
      worker: 'w',
      task_types: ['nobody.queues'],
      wait_ms: 60_000,
    });
    let answered = false;
    void poll.then(() => {
      answered = true;
    });
    // The poll has reached its handler (its worker is listed as seen) and waits (the gauge counts the server's
    // own system-task poll too, when it waits).
    const waiting = async () => {
      const workers = await (await fetch(`${t.url}/v1/workers`, { headers: auth })).json();
      const text = await (await fetch(`${t.url}/metrics`, { headers: auth })).text();
      const gauge = Number(/^weft_polls_waiting (\d+)$/m.exec(text)?.[1] ?? 0);
      return (workers as { items: { name: string }[] }).items.some((w) => w.name === 'w') && gauge >= 1;
    };
    const end = Date.now() + 60_000;
    while (!(await waiting())) {
      if (Date.now() > end) throw new Error('the poll never waited');
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(answered).toBe(false);
    // The poll would wait 30 s (the server's cap) and a stream for ever: close() resolving well before
    // shows it waited for neither.
    await within(t.server.close(), 20_000, 'close()');
    expect(await within(poll, 1_000, 'the poll answer')).toMatchObject({ status: 200, body: { tasks: [] } });
    expect(await within(streamEnded, 1_000, 'the end of the stream')).toBe(true);
  });
});
