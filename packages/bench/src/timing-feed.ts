// Imported by the benchmark's worker processes, whose memory is measured: it imports nothing at run time.
import type { Timing } from './processes.js';

/** Wall-clock milliseconds with microsecond precision: the clock the benchmark and its children share. */
export const now = () => performance.timeOrigin + performance.now();

/**
 * The handler timings a benchmark child process records, sent to the benchmark as they come (every 50 ms)
 * rather than kept for a whole phase: kept, tens of thousands of them (a paced phase of W4) counted in the
 * memory the benchmark measures of that very process.
 */
export class TimingFeed {
  private kept: Timing[] = [];

  /** `send` carries a batch of records to the parent, in the child's own message form. */
  constructor(send: (timings: Timing[]) => void, everyMs = 50) {
    setInterval(() => {
      if (this.kept.length > 0) send(this.take());
    }, everyMs).unref();
  }

  /** Records a handler that started at `start` and ends now; a map item or loop pass is `node[iteration]`. */
  record(runId: string, nodeId: string, iteration: string, start: number): void {
    const node = iteration ? `${nodeId}[${iteration}]` : nodeId;
    this.kept.push([runId, node, start, now()]);
  }

  /** The records not yet sent, which the caller now sends (a dump's answer). */
  take(): Timing[] {
    const taken = this.kept;
    this.kept = [];
    return taken;
  }
}
