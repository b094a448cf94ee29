import {
  type Action,
  compileWorkflow,
  type DecideOptions,
  type DecisionState,
  decide,
  type Json,
  type Mailbox,
  mailboxKey,
  needsWholeRun,
  parseDefinition,
  planLoad,
  type RunEvent,
  type RunView,
  type TaskState,
  taskKey,
  type Workflow,
} from '@weft/core';

/** A workflow from YAML, or a thrown error listing the problems. */
export function workflowOf(yaml: string): Workflow {
  const parsed = parseDefinition(yaml);
  if (!parsed.ok) throw new Error(parsed.error.map((p) => p.message).join('\n'));
  return compileWorkflow(parsed.value);
}

/**
 * A stand-in for the shell, in memory: keeps a run's full state, loads for each decision only what the
 * plan asks for (and what the decider then asks for), and applies actions the way the store does.
 */
export class Sim {
  run: RunView;
  readonly tasks = new Map<string, TaskState>();
  readonly actions: Action[] = [];
  readonly history: { type: string; nodeId?: string; iteration?: string; attempt?: number; data: Json }[] =
    [];
  readonly timers: { dueAt: Date; purpose: Extract<RunEvent, { kind: 'timer_fired' }>['purpose'] }[] = [];
  /** Events kept for a later decision (`defer`), and decisions asked for (`request_decision`). */
  readonly inbox: RunEvent[] = [];
  requested = 0;
  /** Queued attempts put (back) on the queue by `dispatch_task`. */
  readonly dispatched: string[] = [];
  readonly mailboxes = new Map<string, Mailbox>();
  /** Node instances loaded by each decision (one entry per event), to check evaluation cost. */
  readonly loadsPerEvent: number[] = [];
  readonly effects: Extract<Action, { kind: 'effect' }>[] = [];
  loads = 0;
  now = new Date('2026-01-01T00:00:00Z');
  /** How the decider is told the shell delivers work (retries on the dispatcher's delay, say). */
  decideOptions: DecideOptions = {};

  constructor(
    readonly workflow: Workflow,
    input: Json = {},
  ) {
    this.run = {
      id: 'run-1',
      definition: 'test',
      version: 1,
      status: 'running',
      input,
      vars: {},
      sinksDone: 0,
    };
  }

  /** Decides several events in one pass, like the evaluator does for a run's inbox. */
  async pass(events: readonly RunEvent[]): Promise<Action[]> {
    const loaded = new Map<string, TaskState | null>();
    const load = (keys: readonly { nodeId: string; iteration: string }[]) => {
      for (const k of keys) {
        const key = taskKey(k.nodeId, k.iteration);
        if (!loaded.has(key)) {
          this.loads++;
          loaded.set(key, this.tasks.get(key) ?? null);
        }
      }
    };
    load(events.flatMap((e) => planLoad(this.workflow, this.run, e)));
    const complete = events.some(needsWholeRun);
    if (complete) for (const [key, task] of this.tasks) loaded.set(key, task);
    const boxes = new Map<string, Mailbox | null>();
    let state: DecisionState = {
      run: this.run,
      tasks: loaded,
      mailboxes: boxes,
      ...(complete ? { complete } : {}),
    };
    const all: Action[] = [];
    for (const event of events) {
      const before = this.loads;
      for (let round = 0; ; round++) {
        const result = await decide(this.workflow, state, event, this.now, this.decideOptions);
        if (result.kind === 'decided') {
          all.push(...result.actions);
          state = result.state;
          break;
        }
        if (round > 20) throw new Error('decider keeps asking for state');
        load(result.keys);
        const merged = new Map(state.tasks);
        for (const k of result.keys)
          merged.set(taskKey(k.nodeId, k.iteration), loaded.get(taskKey(k.nodeId, k.iteration)) ?? null);
        const mergedBoxes = new Map(state.mailboxes ?? []);
        for (const m of result.mailboxes ?? []) {
          const key = mailboxKey(m.name, m.correlation);
          mergedBoxes.set(key, this.mailboxes.get(key) ?? null);
        }
        state = { ...state, run: state.run, tasks: merged, mailboxes: mergedBoxes };
      }
      this.loadsPerEvent.push(this.loads - before);
    }
    for (const action of all) this.apply(action);
    this.actions.push(...all);
    return all;
  }

  /** Decides one event. */
  send(event: RunEvent): Promise<Action[]> {
    return this.pass([event]);
  }

  private readonly fired = new Set<number>();

  /** Fires the earliest timer not fired yet, moving the clock to its due time. */
  async fireNext(): Promise<Action[]> {
    const next = this.timers
      .map((t, i) => ({ t, i }))
      .filter(({ i }) => !this.fired.has(i))
      .sort((a, b) => a.t.dueAt.getTime() - b.t.dueAt.getTime())[0];
    if (!next) throw new Error('no timer to fire');
    this.fired.add(next.i);
    if (next.t.dueAt > this.now) this.now = next.t.dueAt;
    return this.send({ kind: 'timer_fired', purpose: next.t.purpose });
  }

  /** Timers armed and not fired yet. */
  pendingTimers(): Sim['timers'] {
    return this.timers.filter((_, i) => !this.fired.has(i));
  }

  private signals = 0;

  /** A signal sent to the run. */
  signal(name: string, data: Json = null, correlation: string | null = null): RunEvent {
    this.signals += 1;
    return { kind: 'signal_received', signalId: `sig-${this.signals}`, name, correlation, data, by: 'test' };
  }

  /** A worker finishes the current attempt of a node (the store's fenced update, then the event). */
  complete(nodeId: string, output: Json = null, iteration = ''): RunEvent {
    const task = this.task(nodeId, iteration);
    if (task.status !== 'queued' && task.status !== 'running')
      throw new Error(`${nodeId} is ${task.status}, not running`);
    this.tasks.set(taskKey(nodeId, iteration), { ...task, status: 'completed', output });
    return { kind: 'node_completed', nodeId, iteration, attempt: task.attempt };
  }

  /** A worker fails the current attempt. */
  fail(nodeId: string, retryable: boolean, message = 'boom', iteration = ''): RunEvent {
    const task = this.task(nodeId, iteration);
    const error = { message, reason: 'error' as const, retryable };
    this.tasks.set(taskKey(nodeId, iteration), { ...task, status: 'failed', error });
    return { kind: 'node_failed', nodeId, iteration, attempt: task.attempt, error };
  }

  task(nodeId: string, iteration = ''): TaskState {
    const task = this.tasks.get(taskKey(nodeId, iteration));
    if (!task) throw new Error(`no task for ${nodeId}`);
    return task;
  }

  /** Nodes with a queued attempt, in the order they were queued. */
  queued(): string[] {
    return [...this.tasks.values()].filter((t) => t.status === 'queued').map((t) => t.nodeId);
  }

  /** Queued node instances as `node` or `node[iteration]`. */
  queuedAt(): string[] {
    return [...this.tasks.values()]
      .filter((t) => t.status === 'queued')
      .map((t) => (t.iteration ? `${t.nodeId}[${t.iteration}]` : t.nodeId));
  }

  count(type: string, nodeId?: string): number {
    return this.history.filter((h) => h.type === type && (nodeId === undefined || h.nodeId === nodeId))
      .length;
  }

  private apply(action: Action): void {
    switch (action.kind) {
      case 'create_task': {
        const key = taskKey(action.nodeId, action.iteration);
        const existing = this.tasks.get(key);
        if (existing && existing.attempt >= action.attempt)
          throw new Error(`duplicate insert of ${action.nodeId}`);
        this.tasks.set(key, {
          nodeId: action.nodeId,
          iteration: action.iteration,
          attempt: action.attempt,
          status: action.status,
          input: action.input,
          output: action.output,
          error: action.error,
          arrivals: action.arrivals,
        });
        return;
      }
      case 'update_task': {
        const key = taskKey(action.nodeId, action.iteration);
        const t = this.tasks.get(key);
        if (!t || t.status !== action.expect || t.attempt !== action.attempt)
          throw new Error(`bad update of ${action.nodeId}`);
        this.tasks.set(key, {
          ...t,
          status: action.status,
          ...(action.input !== undefined ? { input: action.input } : {}),
          ...(action.output !== undefined ? { output: action.output } : {}),
          ...(action.error !== undefined ? { error: action.error } : {}),
          ...(action.arrivals !== undefined ? { arrivals: action.arrivals } : {}),
        });
        return;
      }
      case 'put_mailbox':
        this.mailboxes.set(mailboxKey(action.mailbox.name, action.mailbox.correlation), action.mailbox);
        return;
      case 'set_vars':
        this.run = { ...this.run, vars: { ...this.run.vars, ...action.values } };
        return;
      case 'cancel_open_work':
        for (const [key, t] of this.tasks) {
          if (['waiting', 'queued', 'running'].includes(t.status))
            this.tasks.set(key, { ...t, status: 'cancelled' });
        }
        this.timers.length = 0;
        return;
      case 'finish_run':
        this.run = { ...this.run, status: action.status };
        return;
      case 'add_sinks_done':
        this.run = { ...this.run, sinksDone: this.run.sinksDone + action.count };
        return;
      case 'set_run_status':
        this.run = { ...this.run, status: action.status };
        return;
      case 'dispatch_task':
        this.dispatched.push(action.nodeId);
        return;
      case 'request_decision':
        this.requested++;
        return;
      case 'defer':
        this.inbox.push(action.event);
        return;
      case 'set_timer':
        this.timers.push({ dueAt: action.dueAt, purpose: action.purpose });
        return;
      case 'effect':
        this.effects.push(action);
        return;
      case 'record':
        this.history.push({
          type: action.type,
          data: action.data,
          ...(action.nodeId !== undefined ? { nodeId: action.nodeId } : {}),
          ...(action.iteration !== undefined ? { iteration: action.iteration } : {}),
          ...(action.attempt !== undefined ? { attempt: action.attempt } : {}),
        });
        return;
    }
  }
}
