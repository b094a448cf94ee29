import {
  type Action,
  type DecideOptions,
  type DecisionState,
  decide,
  isControlEvent,
  type Mailbox,
  type MailboxKey,
  mailboxKey,
  needsWholeRun,
  planLoad,
  type RunEvent,
  type RunView,
  type TaskState,
  taskKey,
  type Workflow,
} from '@weft/core';
import type { PayloadStore } from '../payloads/payload-store.js';
import type { InboxItem, LockedRun } from '../store/records.js';
import type { LoadedTask, StateKey, StoreTx } from '../store/store.js';
import { EngineStats } from '../support/stats.js';
import type { Pass } from './pass.js';

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
 * either visible to this pass or the cause of another one (seed 001, invariants 1-3).
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

  /** Loaded mailboxes with the offloaded data of their kept signals fetched back. */
  private async resolveMailboxes(boxes: Map<string, Mailbox | null>): Promise<Map<string, Mailbox | null>> {
    const payloads = this.payloads;
    if (!payloads) return boxes;
    for (const [key, box] of boxes) {
      if (!box?.buffered.some((b) => payloads.isRef(b.data))) continue;
      const buffered = await Promise.all(
        box.buffered.map(async (b) => ({ ...b, data: await payloads.resolve(b.data) })),
      );
      boxes.set(key, { ...box, buffered });
    }
    return boxes;
  }

  /**
   * An event with its offloaded payload fetched back (a signal's data, a child run's output): the decider
   * and its expressions see the value.
   */
  private async resolveEvent(event: RunEvent): Promise<RunEvent> {
    const payloads = this.payloads;
    if (!payloads) return event;
    if (event.kind === 'signal_received' && payloads.isRef(event.data))
      return { ...event, data: await payloads.resolve(event.data) };
    if (event.kind === 'child_finished' && payloads.isRef(event.output))
      return { ...event, output: await payloads.resolve(event.output) };
    return event;
  }

  /** Loaded rows with offloaded inputs and outputs fetched back (the run lock is held meanwhile). */
  private async resolveRows(rows: LoadedTask[]): Promise<LoadedTask[]> {
    const payloads = this.payloads;
    if (!payloads || !rows.some((r) => payloads.isRef(r.input) || payloads.isRef(r.output))) return rows;
    return Promise.all(
      rows.map(async (r) =>
        payloads.isRef(r.input) || payloads.isRef(r.output)
          ? { ...r, input: await payloads.resolve(r.input), output: await payloads.resolve(r.output) }
          : r,
      ),
    );
  }

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
    return {
      inbox: tx.readInbox(claimed),
      tasks: (() => {
        this.stats.instancesRead += unique.length;
        return tx.loadTasks(unique);
      })(),
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
    const [inbox, loaded] = await Promise.all([reads.inbox, reads.tasks.then((r) => this.resolveRows(r))]);
    const inboxByRun = group(inbox, (i) => i.runId);
    // By run, then by node instance key.
    const known = new Map<string, Map<string, TaskState>>();
    const ids = new Map<string, Map<string, string>>();
    const remember = (rows: readonly LoadedTask[]) => {
      for (const row of rows) {
        const { id, runId, ...state } = row;
        const key = taskKey(row.nodeId, row.iteration);
        inner(known, runId).set(key, state);
        inner(ids, runId).set(key, id);
      }
    };
    remember(loaded);
    const plannedKeys = new Map<string, Set<string>>();
    const plan: { item: DecideItem; workflow: Workflow; events: RunEvent[]; keys: StateKey[] }[] = [];
    for (const item of items) {
      const waiting = item.claimed ? (inboxByRun.get(item.run.id) ?? []) : [];
      let events: RunEvent[];
      if (item.run.status === 'paused') {
        // Pause is not terminal, but a paused run must not be evaluated: keep its events for resume (which
        // asks for a decision in its own transaction) and drop the claim instead of re-queuing it, so
        // deciders do not spin on the run while it is paused. Only an operator's actions are decided; the
        // inbox stays, since deciding its events now would drop what they start (seed 001, "Pause is not
        // terminal"; test: "pause, completions during the pause, resume").
        const rest = item.own.filter((e) => !isControlEvent(e));
        pass.writes.inboxAppend.push(...rest.map((event) => ({ runId: item.run.id, event })));
        events = item.own.filter(isControlEvent);
        if (events.length === 0) continue;
      } else {
        events = [...waiting.map((i) => i.event), ...item.own];
        for (const w of waiting) pass.writes.inboxDone.push({ runId: item.run.id, id: w.id });
      }
      if (events.length === 0) continue;
      const workflow = await this.definitions.workflow(item.run.definitionId, tx);
      const keys = events
        .flatMap((e) => planLoad(workflow, view(item.run), e))
        .map((k) => ({ runId: item.run.id, ...k }));
      plan.push({ item, workflow, events, keys });
    }
    // Keys the prefetch could not know (inbox events, or wrong hints), loaded in one more read.
    for (const p of plan)
      for (const k of p.keys)
        inner(plannedKeys, k.runId, () => new Set<string>()).add(taskKey(k.nodeId, k.iteration));
    const missing = plan
      .filter((p) => !p.item.fresh)
      .flatMap((p) => p.keys)
      .filter((k) => !reads.asked.has(`${k.runId}/${taskKey(k.nodeId, k.iteration)}`));
    if (missing.length > 0) {
      const keys = dedupe(missing);
      this.stats.instancesRead += keys.length;
      remember(await this.resolveRows(await tx.loadTasks(keys)));
    }
    // Decisions that read every instance of their run get them all, and a complete state.
    const whole = plan.filter((p) => p.events.some(needsWholeRun));
    const unread = whole.filter((p) => !p.item.wholeRun).map((p) => p.item.run.id);
    if (unread.length > 0) {
      const rows = await this.resolveRows(await tx.loadRunTasks(unread));
      this.stats.instancesRead += rows.length;
      remember(rows);
    }
    for (const p of whole) if (p.item.wholeRun) remember(await this.resolveRows([...p.item.wholeRun]));
    const complete = new Set(whole.map((p) => p.item.run.id));
    let decided = 0;
    for (const { item, workflow, events } of plan) {
      const run = item.run;
      const tasks = new Map<string, TaskState | null>();
      const runIds = new Map<string, string>();
      for (const [key, value] of known.get(run.id) ?? []) tasks.set(key, value);
      for (const [key, id] of ids.get(run.id) ?? []) runIds.set(key, id);
      // Planned keys with no row are known to be absent.
      for (const key of plannedKeys.get(run.id) ?? []) if (!tasks.has(key)) tasks.set(key, null);
      const runView = view(run);
      if (this.payloads?.isRef(runView.input))
        (runView as { input: RunView['input'] }).input = await this.payloads.resolve(runView.input);
      let state: DecisionState = {
        run: runView,
        tasks,
        mailboxes: new Map(),
        ...(complete.has(run.id) ? { complete: true } : {}),
      };
      const actions: Action[] = [];
      for (const received of events) {
        const event = await this.resolveEvent(received);
        for (let round = 0; ; round++) {
          const result = await decide(workflow, state, event, run.now, this.decideOptions);
          if (result.kind === 'decided') {
            actions.push(...result.actions);
            state = result.state;
            break;
          }
          if (round >= MAX_LOAD_ROUNDS)
            throw new Error(`decision on run ${run.id} kept asking for more state (${event.kind})`);
          this.stats.instancesRead += result.keys.length;
          const [rows, boxes] = await Promise.all([
            tx.loadTasks(result.keys.map((k) => ({ runId: run.id, ...k }))).then((r) => this.resolveRows(r)),
            result.mailboxes
              ? loadMailboxes(tx, run.id, result.mailboxes).then((b) => this.resolveMailboxes(b))
              : null,
          ]);
          const merged = new Map(state.tasks);
          for (const k of result.keys) merged.set(taskKey(k.nodeId, k.iteration), null);
          for (const row of rows) {
            const { id, runId: _r, ...s } = row;
            merged.set(taskKey(row.nodeId, row.iteration), s);
            runIds.set(taskKey(row.nodeId, row.iteration), id);
          }
          state = {
            ...state,
            tasks: merged,
            mailboxes: boxes ? new Map([...(state.mailboxes ?? []), ...boxes]) : state.mailboxes,
          };
        }
      }
      pass.addActions(run, actions, runIds, workflow);
      decided += events.length;
      this.stats.eventsDecided += events.length;
    }
    return decided;
  }
}

/** Loads signal mailboxes for a decision: absent ones are known to be empty (null). */
async function loadMailboxes(
  tx: StoreTx,
  runId: string,
  keys: readonly MailboxKey[],
): Promise<Map<string, Mailbox | null>> {
  const out = new Map<string, Mailbox | null>(keys.map((k) => [mailboxKey(k.name, k.correlation), null]));
  for (const row of await tx.loadMailboxes(keys.map((k) => ({ runId, ...k }))))
    out.set(mailboxKey(row.mailbox.name, row.mailbox.correlation), row.mailbox);
  return out;
}

function view(run: LockedRun): RunView {
  return {
    id: run.id,
    definition: run.definitionName,
    version: run.definitionVersion,
    status: run.status,
    input: run.input,
    vars: run.vars,
    sinksDone: run.sinksDone,
  };
}

function inner<K, V extends object>(
  outer: Map<K, V>,
  key: K,
  make: () => V = () => new Map() as unknown as V,
): V {
  let value = outer.get(key);
  if (!value) {
    value = make();
    outer.set(key, value);
  }
  return value;
}

function group<T>(items: readonly T[], key: (t: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = out.get(k);
    if (list) list.push(item);
    else out.set(k, [item]);
  }
  return out;
}

function dedupe(keys: readonly StateKey[]): StateKey[] {
  const seen = new Map<string, StateKey>();
  for (const k of keys) seen.set(`${k.runId}/${taskKey(k.nodeId, k.iteration)}`, k);
  return [...seen.values()];
}
