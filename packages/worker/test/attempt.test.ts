import type { LeasedTask, TaskProtocolClient } from '@weft/client/tasks';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Attempt } from '../src/attempt.js';
import { Problems } from '../src/problems.js';
import { TaskLog } from '../src/task-log.js';

// A task's abort signal and log are made when first read: reading them late must still see what happened.

const task: LeasedTask = {
  task_id: 't-1',
  run_id: 'r-1',
  node_id: 'a',
  iteration: '',
  attempt: 1,
  task_type: 'x',
  definition: 'd',
  input: null,
  lease_token: 'l-1',
  lease_expires_at: new Date().toISOString(),
  deadline_at: null,
  idempotency_key: 'k-1',
};

/** An attempt whose log lines go to `sent` instead of a server. */
function attemptSending(sent: string[][]): Attempt {
  const client = {
    writeLogs: async (_holder: unknown, lines: readonly { message: string }[]) => {
      sent.push(lines.map((l) => l.message));
      return { kept: lines.length, dropped: 0, truncated: false };
    },
  } as unknown as TaskProtocolClient;
  return new Attempt(task, () => new TaskLog(task, () => client, new Problems('test', null)));
}

afterEach(() => {
  vi.useRealTimers();
});

describe('an attempt', () => {
  it('aborts a signal read before the abort, and hands an aborted one when read after', () => {
    const early = attemptSending([]);
    const signal = early.context.signal;
    expect(signal.aborted).toBe(false);
    early.abort(new Error('lease lost'));
    expect(signal.aborted).toBe(true);
    expect((signal.reason as Error).message).toBe('lease lost');

    const late = attemptSending([]);
    late.abort(new Error('lease lost'));
    expect(late.context.signal.aborted).toBe(true);
    expect((late.context.signal.reason as Error).message).toBe('lease lost');
    expect(late.context.signal).toBe(late.context.signal);
  });

  it('sends the lines written before it settles, and none written after', async () => {
    vi.useFakeTimers();
    const sent: string[][] = [];
    const before = attemptSending(sent);
    before.context.log.info('during');
    const sending = before.settle();
    expect(sending).not.toBeNull();
    await sending;
    expect(sent).toEqual([['during']]);

    const after = attemptSending(sent);
    expect(after.settle()).toBeNull();
    after.context.log.info('too late');
    await vi.advanceTimersByTimeAsync(5000);
    expect(sent).toEqual([['during']]);
  });
});
