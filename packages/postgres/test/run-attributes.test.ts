import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, type Harness, harness } from './helpers.js';

const TAGGED = `
name: tagged
nodes:
  - id: tag
    kind: transform
    value: "input.order"
    attributes: { customer: "input.customer", stage: "'checked'", big: "input.order > 100" }
`;
const BROKEN = `
name: tagged-badly
nodes:
  - { id: tag, kind: transform, value: "1", attributes: { customer: "{'nested': true}" } }
`;

let h: Harness;
beforeAll(async () => {
  h = await harness();
  await h.engine.definitions.deploy('default', TAGGED);
  await h.engine.definitions.deploy('default', BROKEN);
});
afterAll(async () => {
  await h?.close();
});

const done = (id: string) =>
  eventually(async () => {
    const run = await h.store.getRun(id);
    return run && run.status !== 'running' ? run : undefined;
  });

describe('search attributes', () => {
  it('are given at start, set by a transform node, and read with the run', async () => {
    const run = await h.engine.runs.start({
      namespace: 'default',
      definition: 'tagged',
      input: { order: 250, customer: 42 },
      attributes: { stage: 'new', region: 'eu' },
    });
    const finished = await done(run.id);
    expect(finished.status).toBe('completed');
    // The transform's values replace those of the same name; the others stay.
    expect(finished.attributes).toEqual({ stage: 'checked', region: 'eu', customer: 42, big: true });
    const history = await h.store.readHistory(run.id, 0, 100);
    expect(history.map((e) => e.type)).toContain('attributes.set');
  });

  it('filter lists and counts, matched as text: customer 42 is 42 and "42"', async () => {
    const a = await h.engine.runs.start({
      namespace: 'default',
      definition: 'tagged',
      input: { order: 1, customer: 7 },
    });
    const b = await h.engine.runs.start({
      namespace: 'default',
      definition: 'tagged',
      input: { order: 2, customer: '7' },
    });
    const c = await h.engine.runs.start({
      namespace: 'default',
      definition: 'tagged',
      input: { order: 3, customer: 8 },
    });
    for (const r of [a, b, c]) await done(r.id);
    const page = await h.store.listRuns({
      namespace: 'default',
      limit: 10,
      attribute: { key: 'customer', value: '7' },
    });
    expect(page.items.map((r) => r.id)).toEqual([b.id, a.id]);
    expect(page.items[0]?.attributes).toMatchObject({ customer: '7' });
    expect(
      await h.store.countMatchingRuns(
        { namespace: 'default', attribute: { key: 'customer', value: '8' } },
        100,
      ),
    ).toBe(1);
    const other = await h.store.listRuns({
      namespace: 'other',
      limit: 10,
      attribute: { key: 'customer', value: '7' },
    });
    expect(other.items).toEqual([]);
  });

  it('a transform whose attributes are not text, numbers or booleans fails its node, saying which', async () => {
    const run = await h.engine.runs.start({ namespace: 'default', definition: 'tagged-badly', input: {} });
    const finished = await done(run.id);
    expect(finished.status).toBe('failed');
    expect(JSON.stringify(finished.error)).toContain('attribute customer must be text');
  });

  it('refuses attributes at start that it could not index, naming the attribute', async () => {
    await expect(
      h.engine.runs.start({
        namespace: 'default',
        definition: 'tagged',
        input: {},
        attributes: { 'bad name': 1 },
      }),
    ).rejects.toThrow(/attribute name "bad name"/);
    await expect(
      h.engine.runs.start({
        namespace: 'default',
        definition: 'tagged',
        input: {},
        attributes: { note: 'x'.repeat(300) },
      }),
    ).rejects.toThrow(/at most 256/);
  });
});
