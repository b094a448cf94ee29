import { compileWorkflow, decide, formatProblem, parseDefinition, type RunView } from '@weft/core';
import { describe, expect, it } from 'vitest';

function problems(yaml: string): string[] {
  const result = parseDefinition(yaml);
  return result.ok ? [] : result.error.map(formatProblem);
}

describe('limits and gates in definitions', () => {
  it('reads a limits section and task gates', () => {
    const parsed = parseDefinition(`
name: pay
limits:
  concurrency: { payments.charge: 5 }
  semaphores: { stripe: 10 }
  rates: { mail: { limit: 100, per: 1m } }
  quota: 500
nodes:
  - { id: charge, task_type: payments.charge, semaphores: { stripe: 2 }, priority: 5 }
  - { id: notify, task_type: mail.send, semaphores: [stripe], rate_limit: mail }
edges:
  - { from: charge, to: notify }
`);
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.value.limits).toEqual({
      concurrency: { 'payments.charge': 5 },
      semaphores: { stripe: 10 },
      rates: { mail: { limit: 100, perMs: 60_000 } },
      quota: 500,
    });
    expect(parsed.value.nodes).toEqual([
      expect.objectContaining({ id: 'charge', semaphores: { stripe: 2 }, priority: 5 }),
      expect.objectContaining({ id: 'notify', semaphores: { stripe: 1 }, rateLimit: 'mail' }),
    ]);
  });

  it('reads a limit key, and refuses one on a node with no semaphore or rate limit to split', () => {
    const parsed = parseDefinition(`
name: keyed
nodes:
  - { id: send, task_type: mail.send, rate_limit: mail, limit_key: input.tenant }
`);
    expect(parsed.ok && parsed.value.nodes[0]).toMatchObject({ rateLimit: 'mail', limitKey: 'input.tenant' });
    expect(
      problems(`name: keyed
nodes:
  - { id: send, task_type: mail.send, limit_key: input.tenant }
`),
    ).toEqual([
      'line 3, node "send": nodes[0].limit_key: splits semaphores and a rate limit by key: give the node semaphores or a rate_limit too',
    ]);
    expect(
      problems(
        'name: keyed\nnodes:\n  - { id: send, task_type: mail.send, rate_limit: mail, limit_key: "input.(" }\n',
      ),
    ).toEqual([expect.stringMatching(/limit_key.*cannot parse expression/)]);
  });

  it('explains bad limits with their lines', () => {
    expect(
      problems(`name: x
limits:
  semaphores: { db: 0 }
  rates: { mail: { limit: 3 } }
  quotas: 5
nodes:
  - { id: a, task_type: t, semaphores: { db: many } }
`),
    ).toEqual([
      'line 7, node "a": nodes[0].semaphores: permits for "db" must be a whole number of at least 1',
      'line 3: limits.semaphores.db: must be at least 1, not 0',
      'line 4: limits.rates.mail.per: is required',
      'line 5: limits: unknown field "quotas" for limits (expected concurrency, semaphores, rates, quota) (did you mean "quota"?)',
    ]);
  });
});

const HUMAN = `
name: refund
nodes:
  - id: approve
    kind: human
    title: Approve
    input: { amount: input.amount }
    form: { type: object, required: [ok] }
    assignees: [finance]
    deadline: { after: 2d, to: escalate }
  - { id: pay, task_type: pay }
  - { id: escalate, task_type: escalate }
edges:
  - { from: approve, to: pay }
`;

const run: RunView = {
  id: 'r1',
  definition: 'refund',
  version: 1,
  status: 'running',
  input: { amount: 5 },
  vars: {},
  sinksDone: 0,
};

describe('human nodes', () => {
  it('parses a human node; its deadline adds an edge', () => {
    const parsed = parseDefinition(HUMAN);
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.value.nodes[0]).toMatchObject({
      kind: 'human',
      title: 'Approve',
      assignees: ['finance'],
      deadline: { afterMs: 172_800_000, to: ['escalate'] },
    });
    expect(parsed.value.edges.map((e) => `${e.from}->${e.to}`).sort()).toEqual([
      'approve->escalate',
      'approve->pay',
    ]);
  });

  it('refuses a form that is not a JSON Schema and a deadline to nowhere', () => {
    expect(
      problems(`name: x
nodes:
  - { id: h, kind: human, title: T, form: { type: nonsense }, deadline: { after: 1h, to: nowhere } }
`),
    ).toEqual([
      'line 3: edge h -> nowhere: there is no node "nowhere"',
      expect.stringMatching(/^line 3, node "h": nodes\[0\]\.form is not a valid JSON Schema/),
    ]);
  });

  it('opens a running attempt with its input, an inbox entry and a deadline timer', async () => {
    const parsed = parseDefinition(HUMAN);
    if (!parsed.ok) throw new Error('invalid');
    const workflow = compileWorkflow(parsed.value);
    const now = new Date('2026-01-01T00:00:00Z');
    const tasks = new Map([
      ['approve\u0000', null],
      ['pay\u0000', null],
      ['escalate\u0000', null],
    ]);
    const result = await decide(workflow, { run, tasks }, { kind: 'run_started' }, now);
    expect(result.kind).toBe('decided');
    if (result.kind !== 'decided') return;
    expect(result.actions.map((a) => a.kind)).toEqual([
      'record',
      'create_task',
      'open_human_task',
      'set_timer',
      'record',
    ]);
    expect(result.actions[1]).toMatchObject({ status: 'running', input: { amount: 5 } });
    expect(result.actions[3]).toMatchObject({
      dueAt: new Date('2026-01-03T00:00:00Z'),
      purpose: { kind: 'deadline' },
    });

    // The deadline passes: the attempt times out, leaves the inbox, the deadline edge is taken.
    const opened = result.state;
    const expired = await decide(
      workflow,
      opened,
      { kind: 'timer_fired', purpose: { kind: 'deadline', nodeId: 'approve', iteration: '', attempt: 1 } },
      new Date('2026-01-03T00:00:00Z'),
    );
    if (expired.kind !== 'decided') throw new Error('needs');
    expect(expired.actions.map((a) => a.kind)).toContain('close_human_task');
    expect(expired.state.tasks.get('escalate\u0000')).toMatchObject({ status: 'queued' });
    expect(expired.state.tasks.get('pay\u0000')).toMatchObject({ status: 'skipped' });
  });
});
