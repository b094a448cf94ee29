import type { Clock } from '../support/clock.js';

/** How a background loop is doing, for readiness checks. */
export interface BackgroundLoopStatus {
  readonly name: string;
  /** Started and not stopped; a loop never stops on its own, so false while started means it died. */
  readonly running: boolean;
  /** Rounds failed in a row (0 after a round that worked). */
  readonly failures: number;
  /** When the round under way started (the engine's clock), or null between rounds: a stuck round shows. */
  readonly roundStartedAt: Date | null;
}

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
  private exited = false;
  private failures = 0;
  private roundStartedAt: Date | null = null;

  constructor(
    readonly name: string,
    private readonly round: () => Promise<boolean>,
    private readonly intervalMs: number,
    private readonly clock: Clock,
    private readonly onError: BackgroundLoopErrorHandler,
  ) {}

  start(): void {
    if (this.running) return;
    this.exited = false;
    // A loop ends only when stopped, or when reporting a failure itself fails; then it is marked ended for
    // readiness checks (`/readyz` says `background_stopped`) instead of rejecting where nobody awaits.
    this.running = this.run()
      .catch(() => {})
      .finally(() => {
        this.exited = true;
      });
  }

  /** Whether the loop is running and how many rounds in a row failed. */
  status(): BackgroundLoopStatus {
    return {
      name: this.name,
      running: this.running !== null && !this.exited,
      failures: this.failures,
      roundStartedAt: this.roundStartedAt,
    };
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
    this.failures = 0;
    while (!this.stopper.signal.aborted) {
      this.woken = false;
      let more = false;
      this.roundStartedAt = this.clock.now();
      try {
        more = await this.round();
        this.failures = 0;
      } catch (error) {
        this.failures++;
        this.onError(this.name, error);
      } finally {
        this.roundStartedAt = null;
      }
      if (this.stopper.signal.aborted) break;
      if (more && this.failures === 0) continue;
      if (this.woken) continue;
      this.wakeSignal = new AbortController();
      const wait =
        this.failures > 0 ? Math.min(this.intervalMs * 2 ** this.failures, 30_000) : this.intervalMs;
      await this.clock.sleep(wait, this.wakeSignal.signal);
    }
  }
}
