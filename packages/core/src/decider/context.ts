import type { Workflow } from '../definition/workflow.js';
import type { Json } from '../json.js';
import { type Action, applyAction } from './actions.js';
import type { DecideOptions } from './decide-options.js';
import type { Flow } from './flow.js';
import { emptyMailbox, type Mailbox, mailboxKey } from './mailbox.js';
import {
  type DecisionState,
  lookupTask,
  MissingState,
  type RunView,
  type TaskState,
  taskKey,
} from './state.js';
import { TaskOverlay } from './task-overlay.js';

/** Builds the graph traversal a decision context hands to its handlers. */
export type FlowFactory = (ctx: DecisionContext) => Flow;

/**
 * The working memory of one decision: the state as changed so far and the actions that changed it.
 * Every change goes through `emit`, so what the decision reads afterwards is what the shell will store.
 * Handlers move control through the graph with `flow`.
 */
export class DecisionContext {
  readonly actions: Action[] = [];
  /** Graph movement for handlers: starting nodes, passing control on, ending the run. */
  readonly flow: Flow;
  /** The state given, never changed, under this decision's changes (see TaskOverlay). */
  private readonly tasks: TaskOverlay;
  private readonly mailboxes: Map<string, Mailbox | null>;
  private runView: RunView;
  private readonly complete: boolean;

  constructor(
    readonly workflow: Workflow,
    state: DecisionState,
    readonly now: Date,
    readonly options: DecideOptions,
    private readonly makeFlow: FlowFactory,
  ) {
    this.tasks = TaskOverlay.over(state.tasks);
    this.mailboxes = new Map(state.mailboxes ?? []);
    this.runView = state.run;
    this.complete = state.complete === true;
    this.flow = makeFlow(this);
  }

  /** A new context over this one's state as changed so far, deciding with `options`. */
  fork(options: DecideOptions): DecisionContext {
    return new DecisionContext(this.workflow, this.state(), this.now, options, this.makeFlow);
  }

  get run(): RunView {
    return this.runView;
  }

  /** The latest attempt of a node instance; null when none exists; throws MissingState if not loaded. */
  task(nodeId: string, iteration: string): TaskState | null {
    return lookupTask({ run: this.runView, tasks: this.tasks }, nodeId, iteration);
  }

  /**
   * As `task`, but undefined instead of a throw when the instance was not loaded: for a caller that reads
   * many and asks for all the missing ones at once (see loadAll), without an error built for each.
   */
  taskIfLoaded(nodeId: string, iteration: string): TaskState | null | undefined {
    const key = taskKey(nodeId, iteration);
    return this.tasks.has(key) ? (this.tasks.get(key) ?? null) : undefined;
  }

  /**
   * The latest attempt of every node instance of the run, as changed so far. Only for events that
   * `needsWholeRun`, whose state the shell loads complete; throws otherwise (an engine bug).
   */
  allTasks(): TaskState[] {
    if (!this.complete) throw new Error('this decision needs the whole run loaded (see needsWholeRun)');
    return [...this.tasks.values()].filter((t): t is TaskState => t !== null);
  }

  /**
   * Notes that these node instances have no row yet, without asking the shell: they belong to a loop
   * pass or map item that starts in this decision, so nothing can have created them. Instances already
   * known are left as they are.
   */
  assumeAbsent(keys: readonly { nodeId: string; iteration: string }[]): void {
    for (const k of keys) {
      const key = taskKey(k.nodeId, k.iteration);
      if (!this.tasks.has(key)) this.tasks.set(key, null);
    }
  }

  /** A signal mailbox (empty when it has nothing); throws MissingState if not loaded. */
  mailbox(name: string, correlation: string): Mailbox {
    const key = mailboxKey(name, correlation);
    if (!this.mailboxes.has(key)) throw new MissingState([], [{ name, correlation }]);
    return this.mailboxes.get(key) ?? emptyMailbox(name, correlation);
  }

  emit(action: Action): void {
    this.actions.push(action);
    if (action.kind === 'put_mailbox')
      this.mailboxes.set(mailboxKey(action.mailbox.name, action.mailbox.correlation), action.mailbox);
    this.runView = applyAction(this.tasks, this.runView, action);
  }

  /** Appends a history event. */
  record(type: string, data: Json, at?: { nodeId: string; iteration: string; attempt?: number }): void {
    this.emit({
      kind: 'record',
      type,
      data,
      ...(at ? { nodeId: at.nodeId, iteration: at.iteration } : {}),
      ...(at?.attempt !== undefined ? { attempt: at.attempt } : {}),
    });
  }

  state(): DecisionState {
    return {
      run: this.runView,
      tasks: this.tasks,
      mailboxes: this.mailboxes,
      ...(this.complete ? { complete: true } : {}),
    };
  }
}
