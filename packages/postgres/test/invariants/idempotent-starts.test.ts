import { WeftError } from '@weft/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Fleet, fleet } from '../fleet.js';

// Invariant 11: ten simultaneous starts with one idempotency key, each through its own engine and
// connections, make exactly one run, and all ten answers name it. The key's primary key is the claim: a loser
// waits for the winner's insert and finds the conflict; it looks the winner's run up only after its own
// transaction has ended (inside it, a lookup in the claiming statement's snapshot finds nothing).

let f: Fleet;
beforeAll(async () => {
  f = await fleet(10);
  await f.main.definitions.deploy('default', 'name: idem\nnodes:\n  - { id: a, task_type: idem.a }\n');
  await f.main.definitions.deploy('default', 'name: other\nnodes:\n  - { id: a, task_type: idem.b }\n');
});
afterAll(async () => {
  await f?.close();
});

describe('idempotent starts', () => {
  it('ten simultaneous starts with one key make one run, and all ten answers name it', async () => {
    for (let round = 0; round < 5; round++) {
      const key = `order-${round}`;
      const outcomes = await Promise.all(
        f.engines.map((e, i) =>
          e.runs.open({ namespace: 'default', definition: 'idem', input: { i }, idempotencyKey: key }),
        ),
      );
      const ids = new Set(outcomes.map((o) => o.run.id));
      expect(ids.size).toBe(1);
      expect(outcomes.filter((o) => o.created)).toHaveLength(1);
      const [{ n }] = (await f.db.sql`
        SELECT count(*)::int AS n FROM weft.runs r JOIN weft.idempotency_keys k ON k.run_id = r.id
         WHERE k.key = ${key}`) as unknown as [{ n: number }];
      expect(n).toBe(1);
      const [{ total }] = (await f.db.sql`
        SELECT count(*)::int AS total FROM weft.runs WHERE input ? 'i' AND id = ${[...ids][0]!}::uuid`) as unknown as [
        { total: number },
      ];
      expect(total).toBe(1);
    }
    const [{ runs }] = (await f.db.sql`SELECT count(*)::int AS runs FROM weft.runs`) as unknown as [
      { runs: number },
    ];
    expect(runs).toBe(5);
  });

  it('starts with one key in one batch share the run too', async () => {
    const outcomes = await Promise.all(
      Array.from({ length: 5 }, () =>
        f.main.runs.open({
          namespace: 'default',
          definition: 'idem',
          input: {},
          idempotencyKey: 'same-batch',
        }),
      ),
    );
    expect(new Set(outcomes.map((o) => o.run.id)).size).toBe(1);
    expect(outcomes.filter((o) => o.created)).toHaveLength(1);
  });

  it('a repeated key returns the existing run, or an error when asked for one', async () => {
    const first = await f.main.runs.open({
      namespace: 'default',
      definition: 'idem',
      input: {},
      idempotencyKey: 'k1',
    });
    const again = await f.engines[3]!.runs.open({
      namespace: 'default',
      definition: 'idem',
      input: {},
      idempotencyKey: 'k1',
    });
    expect(again).toEqual({ run: expect.objectContaining({ id: first.run.id }), created: false });
    const error = await f.main.runs
      .open({
        namespace: 'default',
        definition: 'idem',
        input: {},
        idempotencyKey: 'k1',
        onDuplicate: 'error',
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WeftError);
    expect(error).toMatchObject({ code: 'duplicate_start', status: 409, details: { run_id: first.run.id } });
    const reused = await f.main.runs
      .open({ namespace: 'default', definition: 'other', input: {}, idempotencyKey: 'k1' })
      .catch((e: unknown) => e);
    expect(reused).toMatchObject({ code: 'idempotency_key_reused', status: 409 });
  });

  it('keys are per namespace', async () => {
    await f.main.definitions.deploy('other-ns', 'name: idem\nnodes:\n  - { id: a, task_type: idem.a }\n');
    const a = await f.main.runs.open({
      namespace: 'default',
      definition: 'idem',
      input: {},
      idempotencyKey: 'ns-key',
    });
    const b = await f.main.runs.open({
      namespace: 'other-ns',
      definition: 'idem',
      input: {},
      idempotencyKey: 'ns-key',
    });
    expect(a.run.id).not.toBe(b.run.id);
    expect(b.created).toBe(true);
  });
});
