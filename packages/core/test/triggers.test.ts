import { matchTrigger, parseDefinition, type Trigger } from '@weft/core';
import { describe, expect, it } from 'vitest';

const now = new Date('2026-01-01T00:00:00Z');
const nodes = 'nodes: [{ id: a, task_type: a.b }]\n';

function triggersOf(yaml: string): readonly Trigger[] {
  const parsed = parseDefinition(`name: t\n${yaml}${nodes}`);
  if (!parsed.ok) throw new Error(parsed.error.map((p) => p.message).join('\n'));
  return parsed.value.triggers ?? [];
}

function problemsOf(yaml: string): string[] {
  const parsed = parseDefinition(`name: t\n${yaml}${nodes}`);
  return parsed.ok ? [] : parsed.error.map((p) => `${p.line}: ${p.message}`);
}

describe('triggers in a definition', () => {
  it('reads event, filter, input and idempotency, with defaults for what is left out', () => {
    const [full, bare] = triggersOf(`triggers:
  - event: order.placed
    filter: data.amount > 100
    input: { order: data.id, gold: "'yes'" }
    idempotency: data.id
  - event: order.cancelled
`);
    expect(full).toEqual({
      event: 'order.placed',
      filter: 'data.amount > 100',
      input: { order: 'data.id', gold: "'yes'" },
      idempotency: 'data.id',
    });
    expect(bare).toEqual({ event: 'order.cancelled', filter: null, input: null, idempotency: null });
  });

  it('refuses a bad event name, an unparsable expression, a read of nodes and an unknown field, with lines', () => {
    const problems = problemsOf(`triggers:
  - event: "bad name"
  - event: e
    filter: "data.("
  - event: e
    input: { x: nodes.a.output }
  - event: e
    when: "true"
`);
    expect(problems).toEqual([
      expect.stringMatching(/^3: triggers\[0\]\.event: "bad name" is not a valid event name/),
      expect.stringMatching(/^5: triggers\[1\]\.filter: cannot parse expression/),
      expect.stringMatching(/^7: triggers\[2\]\.input: reads nodes/),
      expect.stringMatching(/^9: triggers\[3\]: unknown field "when"/),
    ]);
    expect(problemsOf('triggers: { event: e }\n')).toEqual([
      expect.stringMatching(/^2: triggers: must be a list of triggers/),
    ]);
  });
});

describe('matching an event', () => {
  const event = { id: 'ev-1', name: 'order.placed', data: { id: 'A1', amount: 250 } };
  const trigger = (t: Partial<Trigger>): Trigger => ({
    event: 'order.placed',
    filter: null,
    input: null,
    idempotency: null,
    ...t,
  });

  it('starts with the event data and the event id by default', async () => {
    expect(await matchTrigger(trigger({}), event, now)).toEqual({
      ok: true,
      value: { input: event.data, key: 'ev-1' },
    });
  });

  it('does not match another name, or a filter that is false or reads a missing field', async () => {
    expect(await matchTrigger(trigger({ event: 'other' }), event, now)).toEqual({ ok: true, value: null });
    expect(await matchTrigger(trigger({ filter: 'data.amount > 1000' }), event, now)).toEqual({
      ok: true,
      value: null,
    });
    expect(await matchTrigger(trigger({ filter: 'data.missing = 1' }), event, now)).toEqual({
      ok: true,
      value: null,
    });
  });

  it('maps the input and takes the key from the idempotency expression', async () => {
    const matched = await matchTrigger(
      trigger({
        filter: 'data.amount > 100',
        input: { order: 'data.id', via: 'event.name' },
        idempotency: 'data.id',
      }),
      event,
      now,
    );
    expect(matched).toEqual({ ok: true, value: { input: { order: 'A1', via: 'order.placed' }, key: 'A1' } });
  });

  it('is an error when the input mapping or the key resolves to nothing', async () => {
    const noInput = await matchTrigger(trigger({ input: { x: 'data.nope' } }), event, now);
    expect(noInput.ok).toBe(false);
    const noKey = await matchTrigger(trigger({ idempotency: 'data.nope' }), event, now);
    expect(noKey).toEqual({
      ok: false,
      error: expect.stringMatching(/^idempotency: .* resolved to nothing/),
    });
  });
});
