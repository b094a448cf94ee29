import type { Store } from '../store/store.js';
import type { Logger } from '../support/logger.js';

interface Slot {
  readonly runId: string;
  readonly taskId: string;
  readonly attempt: number;
  readonly release: () => void | Promise<void>;
}

/**
 * Gate slots this process holds, one per leased attempt, each released exactly once: when the attempt's
 * report is handled here, when its lease is lost (a refused heartbeat, the lease reaper), or when a check
 * against the store finds the attempt no longer running (it expired, was cancelled, or finished through
 * another process). A slot whose claim was lost is never held: the lease path releases it at once.
 */
export class GateSlots {
  private readonly held = new Map<string, Slot>();

  constructor(private readonly logger: Logger) {}

  /** How many slots are held. */
  get size(): number {
    return this.held.size;
  }

  /** Keeps the release of an admitted attempt that won its claim. */
  hold(slot: Slot): void {
    this.held.set(key(slot.taskId, slot.attempt), slot);
  }

  /** Releases the slot of an attempt, if this process holds one. */
  async release(taskId: string, attempt: number): Promise<void> {
    const k = key(taskId, attempt);
    const slot = this.held.get(k);
    if (!slot) return;
    this.held.delete(k);
    await callRelease(slot.release, this.logger);
  }

  /**
   * Releases the slots of attempts that are no longer running in the store (expired, cancelled, finished
   * elsewhere). Run by the lease loop, so a slot never outlives its attempt by more than a round.
   */
  async sweep(store: Store): Promise<number> {
    if (this.held.size === 0) return 0;
    const byRun = new Map<string, Slot[]>();
    for (const slot of this.held.values()) byRun.set(slot.runId, [...(byRun.get(slot.runId) ?? []), slot]);
    let released = 0;
    for (const [runId, slots] of byRun) {
      const tasks = new Map((await store.listTasks(runId)).map((t) => [t.id, t]));
      for (const slot of slots) {
        const task = tasks.get(slot.taskId);
        if (task && task.attempt === slot.attempt && task.status === 'running') continue;
        await this.release(slot.taskId, slot.attempt);
        released++;
      }
    }
    return released;
  }
}

/** Calls a gate's release, logging (not throwing) its failure. */
export async function callRelease(release: () => void | Promise<void>, logger: Logger): Promise<void> {
  try {
    await release();
  } catch (e) {
    logger.warn({ error: e instanceof Error ? e.message : String(e) }, 'a gate release failed');
  }
}

const key = (taskId: string, attempt: number) => `${taskId}/${attempt}`;
