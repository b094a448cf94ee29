import {
  type Action,
  type DecideOptions,
  type DecisionState,
  decide,
  isOperatorAction,
  needsWholeRun,
  planLoad,
  type RunEvent,
  type RunView,
  taskKey,
  type Workflow,
} from '@weft/core';
import type { PayloadStore } from '../payloads/payload-store.js';
import type { InboxItem, LockedRun } from '../store/records.js';
import type { LoadedTask, StateKey, StoreTx } from '../store/store.js';
import { EngineStats } from '../support/stats.js';
import { dedupe, group, inner, KnownRows, loadMailboxes } from './known-rows.js';
import type { Pass } from './pass.js';
import { withReadAhead } from './read-ahead.js';
import { resolveEvent, resolveMailboxes, resolveRows } from './resolve-payloads.js';
import { runView } from './run-view.js';

const MAX_LOAD_ROUNDS = 20;

/** Where the evaluator gets the compiled workflow of a run's definition version (the definition service). */
export interface WorkflowSource {
  /** Read on the transaction's own connection when `tx` is given. */
  workflow(definitionId: string, tx?: Pick<StoreTx, 'getDefinitionById'>): Promise<Workflow>;
}

/** One locked run to decide: whether its decide-queue row was claimed, and the caller's own events. */
export interface DecideItem {
  readonly run: LockedRun;
  readonly claimed: boolean;
  readonly own: readonly RunEvent[];
  /** A run inserted by this transaction: it has no tasks yet, so there is nothing to read. */
  readonly fresh?: boolean;
  /** Every node instance's latest attempt, when the caller has read them already (see needsWholeRun). */
  readonly wholeRun?: readonly LoadedTask[];
}

/** A run to read ahead for: its definition, whether its decide-queue row is claimed, and its events. */
export interface PrefetchItem {
  readonly runId: string;
  readonly definitionId: string;
  readonly sinksDone?: number;
  readonly claimed: boolean;
  readonly events: readonly RunEvent[];
}

const EMPTY_VIEW: RunView = {
  id: '',
  definition: '',
  version: 0,
  status: 'running',
  input: null,
  vars: {},
  sinksDone: 0,
};

/** What one run of a batch decides, planned before anything is decided. */
interface RunPlan {
  readonly item: DecideItem;
  readonly workflow: Workflow;
  readonly events: RunEvent[];
  /** The node instances its events touch, as planned. */
  readonly keys: StateKey[];
}

/** Reads prepared for a batch of runs, issued by the caller (so they can share a round trip with others). */
export interface Prefetch {
  readonly inbox: Promise<InboxItem[]>;
  readonly tasks: Promise<LoadedTask[]>;
  /** The node instances asked for (`run/key`), whether or not a row came back. */
  readonly asked: ReadonlySet<string>;
}

/**
 * Decides for runs whose row lock the caller holds. The caller has already claimed (deleted) each run's
 * decide-queue row in this transaction, before any read here: that order is what makes a concurrent event
 * either visible to this pass or the cause of another one (invariants 2-4).
 *
 * A batch of runs costs one read round trip: their inboxes and the node instances their events touch are
 * read together. Only when the decider asks for something unplanned is there another.
 */
export class Evaluator {
  /** How the decider adapts to the dispatcher (set by the engine: retries on a queue dispatcher's delay). */
  decideOptions: DecideOptions = {};

  constructor(
    private readonly definitions: WorkflowSource,
    private readonly stats: EngineStats = new EngineStats(),
    private readonly payloads: PayloadStore | null = null,
  ) {}

  /**
   * Starts the reads for a batch: inboxes of claimed runs, and the node instances the given events (the
   * caller's own, or hints of them) will touch. The statements are sent now, in this order, on the
   * transaction's connection; the caller must have claimed before calling.
   */
  async prefetch(tx: StoreTx, items: readonly PrefetchItem[]): Promise<Prefetch> {
    const keys: StateKey[] = [];
    for (const item of items) {
      const workflow = await this.definitions.workflow(item.definitionId, tx);
      // Without the run row (not locked yet), plan as if the run were near its end: a few more rows.
      const near = { ...EMPTY_VIEW, id: item.runId, sinksDone: item.sinksDone ?? Number.MAX_SAFE_INTEGER };
      for (const e of item.events)
        for (const k of planLoad(workflow, near, e)) keys.push({ runId: item.runId, ...k });
    }
    const claimed = items.filter((i) => i.claimed).map((i) => i.runId);
    const unique = dedupe(keys);
    this.stats.instancesRead += unique.length;
    const inbox = tx.readInbox(claimed);
    const tasks = tx.loadTasks(unique);
    // The caller may fail on an earlier statement before it awaits these (a deadlock in a report's claim,
    // which the store retries); they then fail too, and must not be left as unhandled rejections. Awaiting
    // them still throws. Test: "a report whose transaction fails".
    inbox.catch(() => {});
    tasks.catch(() => {});
    return {
      inbox,
      tasks,
      asked: new Set(unique.map((k) => `${k.runId}/${taskKey(k.nodeId, k.iteration)}`)),
    };
  }

  /**
   * Decides each run of the batch: first the events waiting in its inbox (only claimed runs have any:
   * events never sit in the inbox without a decide-queue row), then its own events. Everything goes into
   * `pass`. Returns the number of events decided.
   */
  async decideRuns(
    tx: StoreTx,
    items: readonly DecideItem[],
    pass: Pass,
    prefetched?: Prefetch,
  ): Promise<number> {
    if (items.length === 0) return 0;
    pass.countDecided(items.length);
    const reads =
      prefetched ??
      (await this.prefetch(
        tx,
        items.map((i) => ({
          runId: i.run.id,
          definitionId: i.run.definitionId,
          sinksDone: i.run.sinksDone,
          claimed: i.claimed,
          events: i.fresh ? [] : i.own,
        })),
      ));
    const [inbox, loaded] = await Promise.all([
      reads.inbox,
      reads.tasks.then((r) => resolveRows(this.payloads, r)),
    ]);
    const known = new KnownRows();
    known.add(loaded);
    const plan = await this.plan(
      tx,
      items,
      group(inbox, (i) => i.runId),
      pass,
    );
    const planned = await this.readPlanned(tx, plan, reads.asked, known);
    const complete = await this.readWholeRuns(tx, plan, known);
    let decided = 0;
    for (const p of plan) {
      await this.decideRun(tx, p, known, planned.get(p.item.run.id), complete.has(p.item.run.id), pass);
      decided += p.events.length;
      this.stats.eventsDecided += p.events.length;
    }
    return decided;
  }

  /**
   * What each run decides: the events waiting in its inbox and its own, the workflow, and the node
   * instances they touch. The inbox events it takes are marked done in `pass`.
   */
  private async plan(
    tx: StoreTx,
    items: readonly DecideItem[],
    inboxByRun: ReadonlyMap<string, InboxItem[]>,
    pass: Pass,
  ): Promise<RunPlan[]> {
    const plan: RunPlan[] = [];
    for (const item of items) {
      const waiting = item.claimed ? (inboxByRun.get(item.run.id) ?? []) : [];
      let events: RunEvent[];
      if (item.run.status === 'paused') {
        // Pause is not terminal, but a paused run must not be evaluated: keep its events for resume (which
        // asks for a decision in its own transaction) and drop the claim instead of re-queuing it, so
        // deciders do not spin on the run while it is paused. Only an operator's actions are decided; the
        // inbox stays, since deciding its events now would drop what they start (invariant 5; test: "pause,
        // completions during the pause, resume").
        const rest = item.own.filter((e) => !isOperatorAction(e));
        pass.writes.inboxAppend.push(...rest.map((event) => ({ runId: item.run.id, event })));
        events = item.own.filter(isOperatorAction);
        if (events.length === 0) continue;
      } else {
        events = [...waiting.map((i) => i.event), ...item.own];
        for (const w of waiting) pass.writes.inboxDone.push({ runId: item.run.id, id: w.id });
      }
      if (events.length === 0) continue;
      const workflow = await this.definitions.workflow(item.run.definitionId, tx);
      const keys = events
        .flatMap((e) => planLoad(workflow, runView(item.run), e))
        .map((k) => ({ runId: item.run.id, ...k }));
      plan.push({ item, workflow, events, keys });
    }
    return plan;
  }

  /**
   * Reads the planned node instances the prefetch could not know (inbox events, or wrong hints), in one
   * more read. Returns each run's planned keys: those with no row are known to be absent.
   */
  private async readPlanned(
    tx: StoreTx,
    plan: readonly RunPlan[],
    asked: ReadonlySet<string>,
    known: KnownRows,
  ): Promise<Map<string, Set<string>>> {
    const planned = new Map<string, Set<string>>();
    for (const p of plan)
      for (const k of p.keys)
        inner(planned, k.runId, () => new Set<string>()).add(taskKey(k.nodeId, k.iteration));
    const missing = plan
      .filter((p) => !p.item.fresh)
      .flatMap((p) => p.keys)
      .filter((k) => !asked.has(`${k.runId}/${taskKey(k.nodeId, k.iteration)}`));
    if (missing.length > 0) {
      const keys = dedupe(missing);
      this.stats.instancesRead += keys.length;
      known.add(await resolveRows(this.payloads, await tx.loadTasks(keys)));
    }
    return planned;
  }

  /**
   * Decisions that read every instance of their run get them all, and a complete state. Returns the runs
   * whose state is complete.
   */
  private async readWholeRuns(tx: StoreTx, plan: readonly RunPlan[], known: KnownRows): Promise<Set<string>> {
    const whole = plan.filter((p) => p.events.some(needsWholeRun));
    const unread = whole.filter((p) => !p.item.wholeRun).map((p) => p.item.run.id);
    if (unread.length > 0) {
      const rows = await resolveRows(this.payloads, await tx.loadRunTasks(unread));
      this.stats.instancesRead += rows.length;
      known.add(rows);
    }
    for (const p of whole)
      if (p.item.wholeRun) known.add(await resolveRows(this.payloads, [...p.item.wholeRun]));
    return new Set(whole.map((p) => p.item.run.id));
  }

  /** Decides one run's events in order, each from the state the one before left, into `pass`. */
  private async decideRun(
    tx: StoreTx,
    { item, workflow, events }: RunPlan,
    known: KnownRows,
    planned: ReadonlySet<string> | undefined,
    complete: boolean,
    pass: Pass,
  ): Promise<void> {
    const run = item.run;
    const { tasks, ids } = known.ofRun(run.id);
    // Planned keys with no row are known to be absent.
    for (const key of planned ?? []) if (!tasks.has(key)) tasks.set(key, null);
    const view = runView(run);
    if (this.payloads?.isRef(view.input))
      (view as { input: RunView['input'] }).input = await this.payloads.resolve(view.input);
    let state: DecisionState = {
      run: view,
      tasks,
      mailboxes: new Map(),
      ...(complete ? { complete: true } : {}),
    };
    const actions: Action[] = [];
    for (const [i, received] of events.entries()) {
      const event = await resolveEvent(this.payloads, received);
      const ahead = events.length - i - 1;
      const result = await this.decideEvent(tx, run, workflow, state, event, ids, ahead);
      actions.push(...result.actions);
      state = result.state;
    }
    pass.addActions(run, actions, ids, workflow);
  }

  /**
   * Decides one event, loading what the decider asks for until it has decided: the node instances and
   * signal mailboxes it names (row ids of instances read go into `ids`), and the next passes or items of
   * those it names when `ahead` more events of the run follow (see withReadAhead).
   */
  private async decideEvent(
    tx: StoreTx,
    run: LockedRun,
    workflow: Workflow,
    from: DecisionState,
    event: RunEvent,
    ids: Map<string, string>,
    ahead: number,
  ): Promise<{ actions: readonly Action[]; state: DecisionState }> {
    let state = from;
    for (let round = 0; ; round++) {
      const result = await decide(workflow, state, event, run.now, this.decideOptions);
      if (result.kind === 'decided') return { actions: result.actions, state: result.state };
      if (round >= MAX_LOAD_ROUNDS)
        throw new Error(`decision on run ${run.id} kept asking for more state (${event.kind})`);
      const read = withReadAhead(result.keys, state.tasks, ahead);
      this.stats.instancesRead += read.keys.length;
      const [rows, boxes] = await Promise.all([
        tx
          .loadTasks(read.keys.map((k) => ({ runId: run.id, ...k })))
          .then((r) => resolveRows(this.payloads, r)),
        result.mailboxes
          ? loadMailboxes(tx, run.id, result.mailboxes).then((b) => resolveMailboxes(this.payloads, b))
          : null,
      ]);
      const merged = new Map(state.tasks);
      // What was read and has no row is known absent (the run's lock keeps it so for this transaction).
      for (const key of read.asked) merged.set(key, null);
      for (const row of rows) {
        const { id, runId: _r, ...s } = row;
        merged.set(taskKey(row.nodeId, row.iteration), s);
        ids.set(taskKey(row.nodeId, row.iteration), id);
      }
      state = {
        ...state,
        tasks: merged,
        mailboxes: boxes ? new Map([...(state.mailboxes ?? []), ...boxes]) : state.mailboxes,
      };
    }
  }
}
