import { Relay, type RelayDeps } from '../outbox/relay.js';
import type { BlobDeleter } from '../services/blob-deleter.js';
import type { RetentionService } from '../services/retention.js';
import type { ScheduleService } from '../services/schedules.js';
import type { Clock } from '../support/clock.js';
import type { EngineConfig } from '../support/config.js';
import { BackgroundLoop, type BackgroundLoopStatus } from './background-loop.js';
import { type DeciderDeps, decideRound } from './decider.js';
import { type LeaseReaperDeps, leaseRound } from './lease-reaper.js';
import type { Redispatcher } from './redispatch.js';
import type { Sweeper } from './sweeper.js';
import { type TimerDeps, timerRound } from './timers.js';

/** What an engine's background loops use. */
export interface BackgroundLoopDeps extends DeciderDeps, TimerDeps, LeaseReaperDeps, RelayDeps {
  readonly config: EngineConfig;
}

/** The loops that are services' rounds. */
export interface BackgroundLoopServices {
  readonly schedules: Pick<ScheduleService, 'round'>;
  readonly sweeper: Pick<Sweeper, 'round'>;
  readonly redispatcher: Pick<Redispatcher, 'round'>;
  readonly retention: Pick<RetentionService, 'round'>;
  readonly blobDeleter: Pick<BlobDeleter, 'round'>;
}

/**
 * An engine's background loops, each on its own poll interval: the decider, the timer loop, the lease
 * reaper, the schedule loop, the stuck-run sweeper, the repair of dispatch, retention, the blob deleter and
 * the outbox relay. The decider, the timer loop and the relay also run when a wake-up of their kind arrives.
 */
export class BackgroundLoops {
  private readonly loops: BackgroundLoop[];
  private readonly relay: Relay;

  constructor(ctx: BackgroundLoopDeps, services: BackgroundLoopServices, clock: Clock) {
    const config = ctx.config;
    const onError = (name: string, error: unknown) =>
      ctx.logger.error(
        { loop: name, error: error instanceof Error ? error.message : String(error) },
        'background loop round failed',
      );
    const loop = (name: string, round: () => Promise<boolean>, intervalMs: number) =>
      new BackgroundLoop(name, round, intervalMs, clock, onError);
    const decider = loop('decide', () => decideRound(ctx), config.decidePollMs);
    const timers = loop('timers', () => timerRound(ctx), config.timerPollMs);
    const relayLoop = loop('outbox', () => this.relay.round(), config.relayPollMs);
    this.loops = [
      decider,
      timers,
      loop('leases', () => leaseRound(ctx), config.leasePollMs),
      loop('schedules', () => services.schedules.round(), config.schedulePollMs),
      loop(
        'sweeper',
        async () => {
          await services.sweeper.round();
          return false;
        },
        config.sweepPollMs,
      ),
      loop('redispatch', () => services.redispatcher.round(), config.redispatchPollMs),
      loop('retention', () => services.retention.round(), config.retentionPollMs),
      // With retention's pacing: the blobs its purges listed.
      loop('blobs', () => services.blobDeleter.round(), config.retentionPollMs),
      relayLoop,
    ];
    this.relay = new Relay(ctx, () => relayLoop.wake());
    ctx.wakeups.on('decisions', () => decider.wake());
    ctx.wakeups.on('timers', () => timers.wake());
    ctx.wakeups.on('outbox', () => relayLoop.wake());
  }

  /** Starts every loop. */
  start(): void {
    for (const loop of this.loops) loop.start();
  }

  /** Each loop's status. */
  status(): BackgroundLoopStatus[] {
    return this.loops.map((l) => l.status());
  }

  /** Stops every loop, each after its current round. */
  async stop(): Promise<void> {
    await Promise.all(this.loops.map((l) => l.stop()));
  }

  /** Stops the relay starting deliveries and waits for those in flight. */
  stopRelay(): Promise<void> {
    return this.relay.stop();
  }
}
