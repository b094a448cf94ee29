import { TEST_ADMIN_KEY } from '@weft/testing';
import { TerminalError, Worker } from '@weft/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../server/test/helpers.js';

// A handler's result that cannot be sent as JSON fails that task for good, with the reason; the other
// reports of the worker's batch are delivered.

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
  await t.call(
    'POST',
    '/v1/definitions',
    'name: odd-outputs\nnodes:\n  - { id: a, task_type: sdk.odd, input: { n: input.n }, retry: { max_attempts: 3, delay: 0s } }\n',
  );
});
afterAll(async () => {
  await t?.close();
});

async function finished(id: string) {
  for (let i = 0; i < 600; i++) {
    const run = (await t.call('GET', `/v1/runs/${id}`)).body;
    if (run.status !== 'running') return run;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`run ${id} never finished`);
}

describe('an output the worker cannot serialise', () => {
  it('fails its task with output_not_serialisable, and the rest of the batch is delivered', async () => {
    const circular: Record<string, unknown> = { name: 'loop' };
    circular.self = circular;
    const details: Record<string, unknown> = {};
    details.again = details;
    const outputs: (() => unknown)[] = [
      () => circular,
      () => ({ big: 10n }),
      () => ({
        toJSON() {
          throw new Error('no JSON for you');
        },
      }),
      () => {
        throw new TerminalError('declined', details);
      },
    ];
    const ids: string[] = [];
    for (let n = 0; n < 10; n++)
      ids.push((await t.call('POST', '/v1/runs', { definition: 'odd-outputs', input: { n } })).body.id);
    // Every task leased in one poll and finished at once: their reports go in one batch.
    const worker = new Worker({
      url: t.url,
      apiKey: TEST_ADMIN_KEY,
      concurrency: 10,
      handlers: {
        'sdk.odd': async (input) => {
          const n = (input as { n: number }).n;
          // Whatever a JavaScript handler returns, typed or not.
          return (n < outputs.length ? outputs[n]!() : { n }) as never;
        },
      },
    });
    await worker.start();
    const runs = await Promise.all(ids.map(finished));
    await worker.stop();
    for (const [n, run] of runs.entries()) {
      if (n >= outputs.length) {
        expect(run.status, `run ${n}`).toBe('completed');
        expect(run.output).toEqual({ a: { n } });
        continue;
      }
      expect(run.status, `run ${n}`).toBe('failed');
      expect(run.tasks, `run ${n}: not retried`).toHaveLength(1);
      const error = run.tasks[0].error;
      expect(error.retryable).toBe(false);
      if (n === 3) {
        expect(error.type).toBe('TerminalError');
        expect(error.details.not_serialisable).toMatch(/circular/i);
        continue;
      }
      expect(error.type).toBe('output_not_serialisable');
      expect(error.details.code).toBe('output_not_serialisable');
      expect(error.message).toMatch([/circular/i, /BigInt/i, /no JSON for you/][n]!);
    }
  });
});
