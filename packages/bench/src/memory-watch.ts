import { statusBytes } from './stats.js';

/** How often the processes' memory is read. */
const EVERY_MS = 50;

/**
 * The highest private memory of some processes while they run: RssAnon from /proc, sampled every 50 ms.
 * A process's peak RSS (VmHWM) also counts the pages of the Node binary it runs, which are shared by every
 * Node process on the host (about 40 MB); RssAnon is what the process itself adds: its heap, its buffers
 * and its threads' memory. The kernel keeps no peak of it, hence the sampling. Reads 0 where /proc is not
 * available.
 */
export class PrivateMemoryWatch {
  private peak = 0;
  private readonly timer: NodeJS.Timeout;
  private reading = false;
  private stopped = false;

  constructor(private readonly pids: readonly number[]) {
    this.timer = setInterval(() => void this.sample(), EVERY_MS);
    this.timer.unref();
    void this.sample();
  }

  /**
   * Stops sampling (after a last sample) and returns the highest private memory seen, in bytes. Once
   * stopped, it returns that figure again without reading.
   */
  async stop(): Promise<number> {
    if (this.stopped) return this.peak;
    this.stopped = true;
    clearInterval(this.timer);
    await this.sample();
    return this.peak;
  }

  private async sample(): Promise<void> {
    if (this.reading) return;
    this.reading = true;
    try {
      const sizes = await Promise.all(this.pids.map((pid) => statusBytes(pid, 'RssAnon')));
      this.peak = Math.max(this.peak, ...sizes);
    } finally {
      this.reading = false;
    }
  }
}
