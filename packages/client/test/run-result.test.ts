import {
  RunCancelledError,
  RunFailedError,
  RunWaitTimeoutError,
  WeftApiError,
  WeftClient,
} from '@weft/client';
import { TEST_ADMIN_KEY } from '@weft/testing';
import { TerminalError, Worker } from '@weft/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../server/test/helpers.js';

let t: TestServer;
let client: WeftClient;
let worker: Worker;
beforeAll(async () => {
  t = await startTestServer();
  client = new WeftClient({ url: t.url, apiKey: TEST_ADMIN_KEY });
  await client.deploy('name: double\nnodes:\n  - { id: a, task_type: rr.double, input: { n: input.n } }\n');
  await client.deploy('name: decline\nnodes:\n  - { id: charge, task_type: rr.decline }\n');
  await client.deploy('name: idle\nnodes:\n  - { id: a, task_type: rr.nobody }\n');
  worker = new Worker({
    url: t.url,
    apiKey: TEST_ADMIN_KEY,
    logger: null,
    handlers: {
      'rr.double': (input) => ({ doubled: (input as { n: number }).n * 2 }),
      'rr.decline': () => {
        throw new TerminalError('card declined', { code: 'do_not_honor' });
      },
    },
  });
  await worker.start();
});
afterAll(async () => {
  await worker?.stop();
  await client?.close();
  await t?.close();
});

/** The rejection of `promise` (fails the test when it resolves). */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (value) => {
      throw new Error(`expected a rejection, got ${JSON.stringify(value)}`);
    },
    (e: unknown) => e,
  );
}

describe('waiting for a run', () => {
  it('startAndWait returns the output of the completed run', async () => {
    const { run, output } = await client.startAndWait('double', { n: 21 }, { timeoutMs: 30_000 });
    expect(run.status).toBe('completed');
    expect(output).toEqual({ a: { doubled: 42 } });
    // A finished run: result answers at once, from the run as stored.
    expect(await client.result(run.id)).toEqual({ a: { doubled: 42 } });
  });

  it('a failed run rejects with RunFailedError carrying the run error', async () => {
    const e = await rejection(client.startAndWait('decline', {}, { timeoutMs: 30_000 }));
    expect(e).toBeInstanceOf(RunFailedError);
    const failed = e as RunFailedError;
    expect(failed.run.status).toBe('failed');
    expect(failed.runError?.node).toBe('charge');
    expect(failed.runError?.message).toContain('card declined');
    expect(failed.message).toContain('card declined');
  });

  it('a run cancelled while waited for rejects with RunCancelledError', async () => {
    const run = await client.startRun('idle', {});
    const waiting = rejection(client.result(run.id, { timeoutMs: 30_000 }));
    await client.cancelRun(run.id, 'no longer needed');
    const e = await waiting;
    expect(e).toBeInstanceOf(RunCancelledError);
    expect((e as RunCancelledError).run.status).toBe('cancelled');
    expect((e as RunCancelledError).runId).toBe(run.id);
  });

  it('a wait that runs out rejects with RunWaitTimeoutError and leaves the run going', async () => {
    const run = await client.startRun('idle', {});
    const e = await rejection(client.result(run.id, { timeoutMs: 300 }));
    expect(e).toBeInstanceOf(RunWaitTimeoutError);
    expect((e as RunWaitTimeoutError).status).toBe('running');
    expect((await client.getRun(run.id)).status).toBe('running');
  });

  it('an aborted wait rejects with the abort reason; an unknown run with the API error', async () => {
    const run = await client.startRun('idle', {});
    const abort = new AbortController();
    const waiting = rejection(client.result(run.id, { signal: abort.signal }));
    abort.abort(new Error('caller gave up'));
    expect(((await waiting) as Error).message).toBe('caller gave up');
    const unknown = await rejection(client.result('0190aaaa-0000-7000-8000-000000000000'));
    expect(unknown).toBeInstanceOf(WeftApiError);
    expect((unknown as WeftApiError).status).toBe(404);
  });
});
