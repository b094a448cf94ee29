import {
  type DispatchTask,
  type Engine,
  type QueueDispatcher,
  runDelivered,
  type StepHandler,
} from '@weft/engine';
import { isMemoryTransactionHandle } from '@weft/memory';

/**
 * A queue dispatcher that keeps its messages in a list in this process: the simplest queue of one's own,
 * for tests. By default it enqueues after commit (no `enqueueIn`), so it exercises the write-then-enqueue
 * path and its repair. With `joinTransactions` it also offers `enqueueIn` for MemoryStore's transactions:
 * its messages then appear when their tasks commit, and never for a transaction that rolls back. Messages
 * are held back until their not-before time.
 */
export class ListDispatcher implements QueueDispatcher {
  readonly kind = 'queue' as const;
  readonly name: string;
  /** Messages not yet taken. */
  readonly messages: DispatchTask[] = [];
  /** Every message ever sent, in order. */
  readonly sent: DispatchTask[] = [];
  /** Present with `joinTransactions`: adds the messages when the store's transaction commits. */
  readonly enqueueIn?: (handle: unknown, tasks: readonly DispatchTask[]) => Promise<void>;

  constructor(options: { readonly joinTransactions?: boolean } = {}) {
    this.name = options.joinTransactions ? 'list-joined' : 'list';
    if (options.joinTransactions)
      this.enqueueIn = async (handle, tasks) => {
        if (!isMemoryTransactionHandle(handle))
          throw new TypeError(
            'ListDispatcher joins only MemoryStore transactions (a handle with afterCommit); create it without joinTransactions for any other store',
          );
        handle.afterCommit(() => {
          this.messages.push(...tasks);
          this.sent.push(...tasks);
        });
      };
  }

  async enqueue(tasks: readonly DispatchTask[]): Promise<void> {
    this.messages.push(...tasks);
    this.sent.push(...tasks);
  }

  /** Takes the messages that are due now. */
  takeDue(now = Date.now()): DispatchTask[] {
    const due: DispatchTask[] = [];
    for (let i = 0; i < this.messages.length; ) {
      const m = this.messages[i]!;
      if (m.notBefore === null || m.notBefore.getTime() <= now) {
        due.push(m);
        this.messages.splice(i, 1);
      } else i++;
    }
    return due;
  }

  /** Starts running due messages of the given types with `handler` through `engine`; returns a stop function. */
  consume(engine: Engine, taskTypes: readonly string[], handler: StepHandler, worker = 'list-consumer') {
    let stopped = false;
    const loop = (async () => {
      while (!stopped) {
        const due = this.takeDue();
        const mine = due.filter((m) => taskTypes.includes(m.taskType));
        this.messages.push(...due.filter((m) => !taskTypes.includes(m.taskType)));
        await Promise.all(mine.map((m) => runDelivered(engine.tasks, m, { worker, handler })));
        if (mine.length === 0) await new Promise((r) => setTimeout(r, 20));
      }
    })();
    return async () => {
      stopped = true;
      await loop;
    };
  }
}
