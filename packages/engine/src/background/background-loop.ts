import type { Clock } from '../support/clock.js';

/** Something a background loop reports when a round fails. */
export type BackgroundLoopErrorHandler = (name: string, error: unknown) => void;

/**
 * Runs `round` again and again: right away when woken, otherwise every `intervalMs`. A round returns true
 * when it did a full batch and there may be more, and the loop goes on without sleeping. Errors are
 * reported and the loop backs off; it never stops on its own.
 */
export class BackgroundLoop {
  private readonly stopper = new AbortController();
  private wakeSignal: AbortController = new AbortController();
  private woken = false;
  private running: Promise<void> | null = null;

  constructor(
    readonly name: string,
    private readonly round: () => Promise<boolean>,
    private readonly intervalMs: number,
    private readonly clock: Clock,
    private readonly onError: BackgroundLoopErrorHandler,
  ) {}

  start(): void {
    if (this.running) return;
    this.running = this.run();
  }

  /** Makes the loop look now (or right after its current round). */
  wake(): void {
    this.woken = true;
    this.wakeSignal.abort();
  }

  async stop(): Promise<void> {
    this.stopper.abort();
    this.wakeSignal.abort();
    await this.running;
    this.running = null;
  }

  private async run(): Promise<void> {
    let failures = 0;
    while (!this.stopper.signal.aborted) {
      this.woken = false;
      let more = false;
      try {
        more = await this.round();
        failures = 0;
      } catch (error) {
        failures++;
        this.onError(this.name, error);
      }
      if (this.stopper.signal.aborted) break;
      if (more && failures === 0) continue;
      if (this.woken) continue;
      this.wakeSignal = new AbortController();
      const wait = failures > 0 ? Math.min(this.intervalMs * 2 ** failures, 30_000) : this.intervalMs;
      await this.clock.sleep(wait, this.wakeSignal.signal);
    }
  }
}
