import type { EmitOutcome } from '@weft/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Fleet, fleet } from '../fleet.js';

// Invariant 11, for events: an event starts each matching definition at most once per event id, even
// when the same event arrives at once on several servers. Each start carries the idempotency key
// `event:<definition>:<event id>`; the key's primary key is the claim, so the losers share the winner's run.

let f: Fleet;
beforeAll(async () => {
  f = await fleet(8);
  const deploy = (yaml: string) => f.main.definitions.deploy('default', yaml);
  await deploy(`name: ship
triggers: [{ event: order.placed, input: { order: data.id } }]
nodes: [{ id: a, task_type: ev.ship }]
`);
  await deploy(`name: review
triggers: [{ event: order.placed, filter: "data.amount > 100", idempotency: "data.id" }]
nodes: [{ id: a, task_type: ev.review }]
`);
  await deploy(`name: refund
triggers: [{ event: order.refunded }]
nodes: [{ id: a, task_type: ev.refund }]
`);
  // Listened in version 1, no longer in version 2: events start the latest version only.
  await deploy(`name: retired
triggers: [{ event: order.placed }]
nodes: [{ id: a, task_type: ev.retired }]
`);
  await deploy(`name: retired
nodes: [{ id: a, task_type: ev.retired2 }]
`);
});
afterAll(async () => {
  await f?.close();
});

const runsOf = (o: EmitOutcome) => o.runs.map((r) => `${r.definition}:${r.run.id}`).sort();

async function countRuns(definition: string): Promise<number> {
  const [{ n }] = (await f.db.sql`
    SELECT count(*)::int AS n FROM weft.runs r JOIN weft.definitions d ON d.id = r.definition_id
     WHERE d.name = ${definition}`) as unknown as [{ n: number }];
  return n;
}

describe('events starting runs', () => {
  it('the same event sent at once from eight connections starts one run per matching definition', async () => {
    for (let round = 0; round < 5; round++) {
      const event = {
        namespace: 'default',
        name: 'order.placed',
        id: `ev-${round}`,
        data: { id: `A${round}`, amount: 500 },
      };
      const outcomes = await Promise.all(f.engines.map((e) => e.events.emit(event)));
      for (const o of outcomes) {
        expect(o.failures).toEqual([]);
        expect(o.runs.map((r) => r.definition).sort()).toEqual(['review', 'ship']);
        expect(runsOf(o)).toEqual(runsOf(outcomes[0]!));
      }
      const created = outcomes.flatMap((o) => o.runs.filter((r) => r.created).map((r) => r.definition));
      expect(created.sort()).toEqual(['review', 'ship']);
      expect(await countRuns('ship')).toBe(round + 1);
      expect(await countRuns('review')).toBe(round + 1);
    }
    expect(await countRuns('refund')).toBe(0);
    expect(await countRuns('retired')).toBe(0);
  });

  it('starts with the mapped input, skips a definition whose filter fails, and answers the runs of a repeated id', async () => {
    const event = {
      namespace: 'default',
      name: 'order.placed',
      id: 'small-1',
      data: { id: 'S1', amount: 5 },
    };
    const first = await f.main.events.emit(event);
    expect(first.runs).toEqual([
      expect.objectContaining({
        definition: 'ship',
        created: true,
        run: expect.objectContaining({ input: { order: 'S1' } }),
      }),
    ]);
    const again = await f.engines[4]!.events.emit(event);
    expect(again.runs).toEqual([
      expect.objectContaining({
        definition: 'ship',
        created: false,
        run: expect.objectContaining({ id: first.runs[0]!.run.id }),
      }),
    ]);
  });

  it('answers nothing started for an event no definition listens for', async () => {
    const none = await f.main.events.emit({
      namespace: 'default',
      name: 'nobody.listens',
      id: 'x',
      data: {},
    });
    expect(none).toEqual({ runs: [], failures: [] });
    const other = await f.main.events.emit({ namespace: 'other', name: 'order.placed', id: 'x', data: {} });
    expect(other).toEqual({ runs: [], failures: [] });
  });
});
