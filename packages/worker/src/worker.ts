import { hostname } from 'node:os';
import { type ClientOptions, type LeasedTask, type Report, TaskProtocolClient } from '@weft/client/tasks';
import { Attempt } from './attempt.js';
import { DEFAULT_CONNECT_TIMEOUT_MS, reachServer } from './connect.js';
import { TerminalError } from './errors.js';
import { traceHandler } from './handler-span.js';
import { errorReport, outputReport } from './outcome.js';
import { Problems } from './problems.js';
import { RedisPoll } from './redis-poll.js';
import { RedisTaskSource } from './redis-source.js';
import { TaskLog } from './task-log.js';
import type { WorkerOptions } from './worker-options.js';

export type { Handler, TaskContext } from './task-context.js';
export type { WorkerOptions } from './worker-options.js';

/**
 * What one request may carry, as the server's request schemas say: tasks asked for by a poll or a report,
 * and reports or heartbeats sent together. A worker holding more asks and sends in pieces.
 */
const MAX_TASKS_ASKED = 500;
const MAX_ITEMS_SENT = 1000;

/** Counts since the worker started. */
export interface WorkerStats {
  completed: number;
  failed: number;
  refused: number;
  inFlight: number;
}

/**
 * A worker: polls the server for its task types (long poll), runs handlers up to a concurrency limit,
 * renews leases in the background, and reports results in batches. A report also asks for the next tasks
 * for the slots it frees, so a busy worker gets new work in the same round trip as it reports.
 */
export class Worker {
  readonly name: string;
  readonly stats: WorkerStats = { completed: 0, failed: 0, refused: 0, inFlight: 0 };
  private readonly client: TaskProtocolClient;
  private readonly types: string[];
  private readonly concurrency: number;
  private readonly running = new Map<string, Attempt>();
  private pending: Report[] = [];
  private reporting = 0;
  private polling = false;
  private pollReserved = 0;
  private reportReserved = 0;
  private readonly maxReporting: number;
  private stopping = false;
  /** Set when stop has returned: nothing is sent any more. */
  private closed = false;
  /** Reports in requests on their way. */
  private sending = 0;
  private readonly pollAbort = new AbortController();
  private heartbeatTimer: NodeJS.Timeout | null = null;
  private heartbeatMs = 30_000;
  private idle: (() => void) | null = null;
  private backoffMs = 0;
  private flushScheduled = false;
  private source: RedisTaskSource | null = null;
  private redis: RedisPoll | null = null;
  private readonly problems: Problems;
  private logs: TaskProtocolClient | null = null;
  private readonly clientOptions: ClientOptions;

  constructor(private readonly options: WorkerOptions) {
    this.name = options.name ?? `${hostname()}-${process.pid}-${Math.random().toString(36).slice(2, 6)}`;
    this.clientOptions = {
      url: options.url,
      ...(options.namespace ? { namespace: options.namespace } : {}),
      ...(options.apiKey ? { apiKey: options.apiKey } : {}),
      ...(options.headers ? { headers: options.headers } : {}),
      ...(options.tls ? { tls: options.tls } : {}),
    };
    this.client = new TaskProtocolClient({ ...this.clientOptions, connections: 8 });
    this.types = Object.keys(options.handlers);
    if (this.types.length === 0) throw new Error('a worker needs at least one handler');
    this.concurrency = Math.max(1, options.concurrency ?? 10);
    this.maxReporting = Math.max(1, options.reportsInFlight ?? 2);
    const logger = options.logger === undefined ? console : options.logger;
    this.problems = new Problems(`weft worker ${this.name}:`, logger, options.onProblem);
  }

  /**
   * Starts taking tasks, from the server's queue or from Redis, as the server says. Resolves once the
   * worker is running (not when it stops).
   */
  async start(): Promise<void> {
    const timeoutMs = this.options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
    const info = await reachServer(this.client, this.problems, timeoutMs, () => this.stopping);
    if (info?.dispatcher === 'redis') {
      const url = this.options.redisUrl ?? process.env.REDIS_URL;
      if (!url)
        throw new Error(
          'the server dispatches tasks through Redis: give the worker redisUrl (or set REDIS_URL) to read them',
        );
      this.source = new RedisTaskSource(
        url,
        info.stream_prefix,
        this.options.namespace ?? 'default',
        this.types,
        this.name,
      );
      this.redis = new RedisPoll(
        this.client,
        this.source,
        this.name,
        this.types,
        this.options.pollWaitMs ?? 20_000,
      );
    }
    this.schedule();
  }

  /**
   * Stops gracefully: no new polls, in-flight tasks finish and their results are reported, then the
   * connection closes. After `timeoutMs` the handlers still running are aborted (their leases expire
   * on the server and the tasks are retried elsewhere). After twice `timeoutMs` it stops waiting for
   * handlers that ignore their signal and for reports the server does not take, and says so to
   * `onProblem`: those tasks are retried once their leases expire.
   */
  async stop(timeoutMs = 30_000): Promise<void> {
    this.stopping = true;
    this.pollAbort.abort();
    const drained = new Promise<'drained'>((resolve) => {
      this.idle = () => resolve('drained');
      this.checkIdle();
    });
    const abortTimer = setTimeout(() => {
      for (const r of this.running.values()) r.abort();
    }, timeoutMs);
    let giveUpTimer: NodeJS.Timeout | undefined;
    const givenUp = new Promise<'given up'>((resolve) => {
      giveUpTimer = setTimeout(() => resolve('given up'), 2 * timeoutMs);
    });
    const how = await Promise.race([drained, givenUp]);
    clearTimeout(abortTimer);
    clearTimeout(giveUpTimer);
    this.idle = null;
    this.closed = true;
    if (how === 'given up')
      this.problems.report(
        `stopped with ${this.running.size} handler(s) still running and ${this.pending.length + this.sending} report(s) not taken by the server; their tasks will be retried when their leases expire`,
      );
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    this.source?.close();
    await Promise.all([this.client.close(), this.logs?.close()]);
  }

  private get free(): number {
    return this.concurrency - this.running.size - this.pollReserved - this.reportReserved;
  }

  /** Starts a poll when slots are free and no report is about to bring tasks. */
  private schedule(): void {
    if (this.stopping || this.polling || this.reporting > 0 || this.pending.length > 0 || this.free <= 0)
      return;
    this.polling = true;
    this.pollReserved = Math.min(this.free, MAX_TASKS_ASKED);
    void this.poll(this.pollReserved);
  }

  private async poll(max: number): Promise<void> {
    try {
      if (this.backoffMs > 0) await new Promise((r) => setTimeout(r, this.backoffMs));
      if (this.redis) {
        await this.pollRedis(this.redis, max);
        return;
      }
      const answer = await this.client.poll(
        this.name,
        this.types,
        max,
        this.options.pollWaitMs ?? 20_000,
        this.pollAbort.signal,
      );
      this.backoffMs = 0;
      this.problems.ok('poll');
      this.setHeartbeat(answer.heartbeat_ms);
      this.pollReserved = 0;
      for (const task of answer.tasks) this.run(task);
    } catch (e) {
      this.pollReserved = 0;
      if (!this.stopping) {
        this.backoffMs = Math.min(Math.max(this.backoffMs * 2, 200), 5000);
        this.problems.report(`poll failed; retrying in ${this.backoffMs} ms`, e, 'poll');
      }
    } finally {
      this.polling = false;
      this.schedule();
      this.checkIdle();
    }
  }

  /** One round of taking tasks from Redis (and the table queue, for tasks under limits): see RedisPoll. */
  private async pollRedis(redis: RedisPoll, max: number): Promise<void> {
    let got: Awaited<ReturnType<RedisPoll['take']>>;
    try {
      got = await redis.take(max, this.pollAbort.signal);
    } catch (e) {
      if (this.stopping) return;
      throw e;
    }
    this.backoffMs = 0;
    this.problems.ok('poll');
    this.pollReserved = 0;
    if (got.heartbeatMs !== null) this.setHeartbeat(got.heartbeatMs);
    for (const task of got.tasks) this.run(task);
  }

  private run(task: LeasedTask): void {
    const handler = this.options.handlers[task.task_type];
    const attempt = new Attempt(task, () => new TaskLog(task, () => this.logsClient(), this.problems));
    this.running.set(task.task_id, attempt);
    this.stats.inFlight = this.running.size;
    const base = {
      run_id: task.run_id,
      task_id: task.task_id,
      attempt: task.attempt,
      lease_token: task.lease_token,
      node_id: task.node_id,
      iteration: task.iteration,
    };
    // The attempt's last log lines go before its report (which ends its lease); nothing waits when none.
    const settle = (report: Report) => {
      const sending = attempt.settle();
      if (sending) void sending.then(() => this.finish(task, report));
      else this.finish(task, report);
    };
    traceHandler(task, this.name, () => {
      if (!handler) throw new TerminalError(`this worker has no handler for task type ${task.task_type}`);
      return handler(task.input, attempt.context);
    }).then(
      (output) => settle(outputReport(base, task.task_type, output)),
      (error: unknown) => settle(errorReport(base, error)),
    );
  }

  /** An attempt is over: its report waits for the next batch. */
  private finish(task: LeasedTask, report: Report): void {
    this.running.delete(task.task_id);
    this.stats.inFlight = this.running.size;
    this.pending.push(report);
    this.flushSoon();
  }

  /**
   * Flushes after the current turn of the event loop, so that handlers finishing together (a batch of
   * quick tasks) go in one report instead of one report each.
   */
  private flushSoon(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => {
      this.flushScheduled = false;
      this.flush();
    });
  }

  /**
   * Sends pending reports, a few requests at a time and at most 1,000 reports a request; reports finishing
   * meanwhile go in the next batch.
   */
  private flush(): void {
    if (this.closed || this.reporting >= this.maxReporting || this.pending.length === 0) return;
    const batch = this.pending.splice(0, MAX_ITEMS_SENT);
    this.sending += batch.length;
    const want = this.stopping ? 0 : Math.min(Math.max(0, this.free), MAX_TASKS_ASKED);
    this.reportReserved += want;
    this.reporting++;
    void (async () => {
      let reserved = want;
      try {
        const answer = await this.client.report(this.name, batch, { taskTypes: this.types, max: want });
        this.sending -= batch.length;
        this.backoffMs = 0;
        this.problems.ok('report');
        for (const [i, result] of answer.results.entries()) {
          const sent = batch[i]!;
          if (!result.accepted) {
            this.stats.refused++;
            this.problems.report(`report for task ${result.task_id} was refused: ${result.why}`);
          } else if ('error' in sent) this.stats.failed++;
          else this.stats.completed++;
        }
        this.reportReserved -= reserved;
        reserved = 0;
        for (const task of answer.tasks) this.run(task);
      } catch (e) {
        // Keep the reports: fencing makes re-sending safe.
        this.sending -= batch.length;
        this.pending = [...batch, ...this.pending];
        // Stopped meanwhile: stop's closing message already counted these reports, and nothing more is sent.
        if (this.closed) return;
        this.backoffMs = Math.min(Math.max(this.backoffMs * 2, 200), 5000);
        this.problems.report(`report failed; retrying in ${this.backoffMs} ms`, e, 'report');
        await new Promise((r) => setTimeout(r, this.backoffMs));
      } finally {
        this.reportReserved -= reserved;
        this.reporting--;
        this.flush();
        this.schedule();
        this.checkIdle();
      }
    })();
    // More than one request's worth: the rest goes now if another request may be in flight.
    if (this.pending.length > 0) this.flush();
  }

  /** The client that sends log lines, made when a handler first logs. */
  private logsClient(): TaskProtocolClient {
    this.logs ??= new TaskProtocolClient({ ...this.clientOptions, connections: 2 });
    return this.logs;
  }

  private setHeartbeat(ms: number): void {
    if (ms === this.heartbeatMs && this.heartbeatTimer) return;
    this.heartbeatMs = ms;
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    this.heartbeatTimer = setInterval(() => void this.heartbeat(), ms);
    this.heartbeatTimer.unref();
  }

  /** Renews every held lease, up to 1,000 a request; tasks whose lease is lost are aborted. */
  private async heartbeat(): Promise<void> {
    const held = [...this.running.values()];
    const pieces: Attempt[][] = [];
    for (let from = 0; from < held.length; from += MAX_ITEMS_SENT)
      pieces.push(held.slice(from, from + MAX_ITEMS_SENT));
    // The pieces go at once: one after another, the last could be renewed after its leases ran out.
    await Promise.all(
      pieces.map(async (piece) => {
        try {
          const { lost } = await this.client.heartbeat(
            this.name,
            piece.map(({ task }) => ({
              run_id: task.run_id,
              task_id: task.task_id,
              attempt: task.attempt,
              lease_token: task.lease_token,
            })),
          );
          this.problems.ok('heartbeat');
          for (const id of lost) {
            // A task that finished while the heartbeat was on its way is no longer held: its report's
            // verdict tells whether it counted.
            const running = this.running.get(id);
            if (!running) continue;
            running.abort(new Error('the lease on this task was lost'));
            this.problems.report(`lease lost on task ${id}; its handler was signalled to stop`);
          }
        } catch (e) {
          this.problems.report('heartbeat failed; will try again', e, 'heartbeat');
        }
      }),
    );
  }

  private checkIdle(): void {
    if (
      this.idle &&
      this.stopping &&
      !this.polling &&
      this.running.size === 0 &&
      this.pending.length === 0 &&
      this.reporting === 0
    ) {
      const done = this.idle;
      this.idle = null;
      done();
    }
  }
}
