import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './helpers.js';

// Namespaces meet what leaves a run. A child run starts in its parent's namespace (its definition is looked
// up there, and only that namespace sees it); dead letters, their listing and their replay belong to the
// namespace of the run that wrote them; a status callback says which namespace its run is in.

let t: TestServer;
const east = { 'x-weft-namespace': 'east' };
const west = { 'x-weft-namespace': 'west' };

const PARENT = `
name: parent
on_status: { url: "http://127.0.0.1:9/hook", statuses: [completed] }
nodes:
  - { id: sub, kind: sub_workflow, definition: kid, input: { from: "'parent'" } }
output: { kid: nodes.sub.output }
`;
const KID = 'name: kid\nnodes:\n  - { id: k, kind: transform, value: input.from }\n';

async function until<T>(check: () => Promise<T | undefined>, what: string, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

beforeAll(async () => {
  // One failed delivery dead-letters a row, quickly.
  // Loopback is allow-listed so the callback reaches port 9 and fails there, as a real receiver's outage.
  t = await startTestServer(
    { relayPollMs: 50, relayBackoffMs: 20, relayMaxAttempts: 1 },
    { outboundAllow: '127.0.0.1' },
  );
  for (const ns of [east, west]) {
    const deployed = await t.call('POST', '/v1/definitions', PARENT, ns);
    expect(deployed.status).toBeLessThan(300);
  }
  // `kid` exists only in east.
  expect((await t.call('POST', '/v1/definitions', KID, east)).status).toBeLessThan(300);
});
afterAll(async () => {
  await t?.close();
});

const finished = (id: string, ns: Record<string, string>) =>
  until(async () => {
    const r = await t.call('GET', `/v1/runs/${id}`, undefined, ns);
    return r.body.status === 'running' ? undefined : r.body;
  }, `run ${id}`);

describe('namespaces and effects', () => {
  it('starts a child in its parent namespace, visible only there', async () => {
    const started = await t.call('POST', '/v1/runs', { definition: 'parent', input: {} }, east);
    const done = await finished(started.body.id, east);
    expect(done).toMatchObject({ status: 'completed', output: { kid: { k: 'parent' } } });
    const childId = done.tasks.find((x: { node_id: string }) => x.node_id === 'sub').child_run_id;
    const child = await t.call('GET', `/v1/runs/${childId}`, undefined, east);
    expect(child).toMatchObject({
      status: 200,
      body: { namespace: 'east', definition: 'kid', parent: { run_id: started.body.id } },
    });
    expect((await t.call('GET', `/v1/runs/${childId}`, undefined, west)).status).toBe(404);
    expect((await t.call('GET', `/v1/runs/${childId}`)).status).toBe(404);
  });

  it('lists and replays dead letters only in the namespace of their run', async () => {
    // In west, `kid` is not deployed: the child start fails and becomes a dead letter of west.
    const started = await t.call('POST', '/v1/runs', { definition: 'parent', input: {} }, west);
    const dead = await until(async () => {
      const r = await t.call('GET', '/v1/dead-letters?destination=weft.runs', undefined, west);
      return r.body.items.find((d: { run_id: string }) => d.run_id === started.body.id);
    }, 'the child start to be dead-lettered');
    expect(dead).toMatchObject({ kind: 'start_run', payload: { namespace: 'west', definition: 'kid' } });
    expect(dead.last_error).toMatch(/kid/);
    const eastList = await t.call('GET', '/v1/dead-letters?destination=weft.runs', undefined, east);
    expect(eastList.body.items).toEqual([]);
    // Another namespace can neither replay it by id nor by destination.
    expect((await t.call('POST', `/v1/dead-letters/${dead.id}/replay`, undefined, east)).status).toBe(404);
    expect(
      (await t.call('POST', '/v1/dead-letters/replay', { destination: 'weft.runs' }, east)).body,
    ).toEqual({ replayed: 0 });
    // Deployed in west, the replayed start goes through, in west.
    expect((await t.call('POST', '/v1/definitions', KID, west)).status).toBeLessThan(300);
    expect(await t.call('POST', `/v1/dead-letters/${dead.id}/replay`, undefined, west)).toMatchObject({
      status: 200,
      body: { replayed: 1 },
    });
    const done = await finished(started.body.id, west);
    expect(done).toMatchObject({ status: 'completed', output: { kid: { k: 'parent' } } });
    const childId = done.tasks[0].child_run_id;
    expect((await t.call('GET', `/v1/runs/${childId}`, undefined, west)).body.namespace).toBe('west');
  });

  it("dead-letters a status callback in its run's namespace, naming it", async () => {
    // The callback URL refuses connections: each namespace's completed parents left a dead callback.
    for (const ns of [east, west]) {
      const name = ns['x-weft-namespace'];
      const dead = await until(async () => {
        const r = await t.call('GET', '/v1/dead-letters?destination=weft.webhook', undefined, ns);
        return r.body.items.length > 0 ? r.body.items : undefined;
      }, `a dead callback in ${name}`);
      for (const d of dead)
        expect(d.payload).toMatchObject({
          kind: 'webhook',
          message: { type: 'run.completed', source: { namespace: name } },
        });
    }
  });
});
