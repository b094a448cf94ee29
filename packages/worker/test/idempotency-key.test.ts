import { TEST_ADMIN_KEY } from '@weft/testing';
import { Worker } from '@weft/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../server/test/helpers.js';

// A handler's ctx.idempotencyKey is what it gives a payment provider: sent by the server with each leased
// task, the same for every attempt of a node instance and different for every other node instance.

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ leasePollMs: 100 });
});
afterAll(async () => {
  await t?.close();
});

async function finished(id: string, ms = 15_000) {
  const end = Date.now() + ms;
  for (;;) {
    const run = (await t.call('GET', `/v1/runs/${id}`)).body;
    if (run.status === 'completed' || run.status === 'failed') return run;
    if (Date.now() > end) throw new Error(`run ${id} is still ${run.status}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('the side-effect key a worker gets', () => {
  it('is the same for every attempt of a node and differs by node and map item', async () => {
    await t.call(
      'POST',
      '/v1/definitions',
      `name: charges
nodes:
  - { id: charge, task_type: sdk.charge, retry: { max_attempts: 3, delay: 0s } }
  - { id: refund, task_type: sdk.charge, retry: { max_attempts: 3, delay: 0s } }
  - { id: each, kind: map, items: input.items, task: { task_type: sdk.charge } }
`,
    );
    const seen: { node: string; iteration: string; taskId: string; key: string }[] = [];
    const worker = new Worker({
      url: t.url,
      apiKey: TEST_ADMIN_KEY,
      handlers: {
        'sdk.charge': (_input, ctx) => {
          seen.push({
            node: ctx.nodeId,
            iteration: ctx.iteration,
            taskId: ctx.taskId,
            key: ctx.idempotencyKey,
          });
          if (ctx.nodeId === 'charge' && ctx.attempt === 1) throw new Error('the provider timed out');
          return 'ok';
        },
      },
    });
    await worker.start();
    try {
      const id = (await t.call('POST', '/v1/runs', { definition: 'charges', input: { items: [1, 2] } })).body
        .id;
      expect((await finished(id)).status).toBe('completed');
    } finally {
      await worker.stop();
    }
    const charges = seen.filter((s) => s.node === 'charge');
    expect(charges).toHaveLength(2);
    expect(charges[1]!.taskId).not.toBe(charges[0]!.taskId);
    expect(charges[1]!.key).toBe(charges[0]!.key);
    const instances = new Map(seen.map((s) => [`${s.node}[${s.iteration}]`, s.key]));
    expect(instances.size).toBe(4);
    expect(new Set(instances.values()).size).toBe(4);
  });
});
