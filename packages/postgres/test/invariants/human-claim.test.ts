import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Fleet, fleet } from '../fleet.js';
import { eventually } from '../helpers.js';

// Invariant 19: a human task claim is one conditional UPDATE. Ten people claiming one task at the same
// instant, each through their own connection: exactly one wins, whatever the interleaving, because the losers
// re-check `claimed_by IS NULL` after the winner commits.

const APPROVAL = `
name: approval
nodes:
  - id: approve
    kind: human
    title: Approve the refund
    input: { amount: input.amount }
    form: { type: object, required: [ok], properties: { ok: { type: boolean } } }
    assignees: [finance]
`;

let f: Fleet;
beforeAll(async () => {
  f = await fleet(10);
  await f.main.definitions.deploy('default', APPROVAL);
});
afterAll(async () => {
  await f?.close();
});

describe('human task claims', () => {
  it('ten simultaneous claims on ten connections: exactly one wins', async () => {
    for (let round = 0; round < 5; round++) {
      const run = await f.main.runs.start({
        namespace: 'default',
        definition: 'approval',
        input: { amount: round },
      });
      const [task] = await eventually(async () => {
        const list = await f.main.inbox.list({ namespace: 'default', runId: run.id, limit: 10 });
        return list.length > 0 ? list : undefined;
      });
      const claims = await Promise.allSettled(
        f.engines.map((e, i) => e.inbox.claim('default', task!.taskId, `person-${i}`)),
      );
      const won = claims.filter((c) => c.status === 'fulfilled');
      expect(won).toHaveLength(1);
      const lost = claims.filter((c): c is PromiseRejectedResult => c.status === 'rejected');
      expect(lost.every((c) => c.reason.code === 'human_task_taken')).toBe(true);
      const winner = (won[0] as PromiseFulfilledResult<{ claimedBy: string }>).value.claimedBy;
      const [row] = (await f.db.sql`
        SELECT claimed_by FROM weft.human_tasks WHERE task_id = ${task!.taskId}::uuid`) as unknown as [
        { claimedBy: string },
      ];
      expect(row.claimedBy).toBe(winner);
    }
  });
});
