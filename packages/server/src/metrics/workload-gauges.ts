import type { Store, WorkloadSnapshot } from '@weft/engine';
import type { FastifyBaseLogger } from 'fastify';
import { Gauge, type Registry } from 'prom-client';
import type { LabelFold, LabelFolds } from './label-fold.js';

/** How long one read of the workload serves scrapes: a storm of scrapes costs one read per interval. */
export const WORKLOAD_CACHE_MS = 5_000;

/**
 * Reads the store's workload at most once per `WORKLOAD_CACHE_MS`, shared by every gauge of one scrape and
 * by scrapes that overlap. A failed read is logged and serves no values (the gauges are left empty rather
 * than stale), so a database outage cannot fail `/metrics`.
 */
export class WorkloadCache {
  private last: { at: number; value: Promise<WorkloadSnapshot | null> } | null = null;

  constructor(
    private readonly store: Store,
    private readonly logger: FastifyBaseLogger | null,
    private readonly ttlMs = WORKLOAD_CACHE_MS,
  ) {}

  /** The latest snapshot, read again when the cached one is older than the cache's life. */
  get(): Promise<WorkloadSnapshot | null> {
    const read = this.store.workload?.bind(this.store);
    if (!read) return Promise.resolve(null);
    const now = Date.now();
    if (this.last && now - this.last.at < this.ttlMs) return this.last.value;
    const value = read().catch((e: unknown) => {
      this.logger?.warn({ err: e }, 'metrics: the workload gauges could not be read from the store');
      return null;
    });
    this.last = { at: now, value };
    return value;
  }
}

/** Sums values whose labels fold together (past a label's limit). */
function folded<T>(
  rows: readonly T[],
  key: (row: T) => string,
  value: (row: T) => number,
): Map<string, number> {
  const out = new Map<string, number>();
  for (const row of rows) out.set(key(row), (out.get(key(row)) ?? 0) + value(row));
  return out;
}

type GaugeSpec = {
  readonly name: string;
  readonly help: string;
  readonly labels: readonly string[];
  /** The series of a snapshot: label values (in `labels` order) and the value. */
  readonly series: (s: WorkloadSnapshot, folds: LabelFolds) => Map<string, number>;
};

const key = (...values: string[]) => JSON.stringify(values);
const fold = (f: LabelFold, v: string) => f.value(v);

const GAUGES: readonly GaugeSpec[] = [
  {
    name: 'weft_tasks_queued',
    help: 'Tasks due and waiting on the queue, by namespace and task type (read from the database, cached 5 s).',
    labels: ['namespace', 'task_type'],
    series: (s, f) =>
      folded(
        s.queued,
        (q) => key(fold(f.namespace, q.namespace), fold(f.taskType, q.taskType)),
        (q) => q.queued,
      ),
  },
  {
    name: 'weft_tasks_queued_oldest_age_seconds',
    help: 'Age of the oldest due task on the queue, by namespace and task type (read from the database, cached 5 s).',
    labels: ['namespace', 'task_type'],
    // Folded series keep the largest age, not the sum.
    series: (s, f) => {
      const out = new Map<string, number>();
      for (const q of s.queued) {
        const k = key(fold(f.namespace, q.namespace), fold(f.taskType, q.taskType));
        out.set(k, Math.max(out.get(k) ?? 0, q.oldestAgeSeconds));
      }
      return out;
    },
  },
  {
    name: 'weft_tasks_running',
    help: 'Attempts held by a worker, by task type (read from the database, cached 5 s).',
    labels: ['task_type'],
    series: (s, f) =>
      folded(
        s.running,
        (r) => key(fold(f.taskType, r.taskType)),
        (r) => r.count,
      ),
  },
  {
    name: 'weft_outbox_backlog',
    help: 'Outbox messages waiting for delivery, by destination (read from the database, cached 5 s).',
    labels: ['destination'],
    series: (s, f) =>
      folded(
        s.outbox,
        (o) => key(fold(f.destination, o.destination)),
        (o) => o.pending,
      ),
  },
  {
    name: 'weft_outbox_dead_letters',
    help: 'Outbox messages dead-lettered and not yet replayed or discarded, by destination (cached 5 s).',
    labels: ['destination'],
    series: (s, f) =>
      folded(
        s.outbox,
        (o) => key(fold(f.destination, o.destination)),
        (o) => o.dead,
      ),
  },
  {
    name: 'weft_human_tasks_open',
    help: 'Human tasks waiting for an answer, by namespace (read from the database, cached 5 s).',
    labels: ['namespace'],
    series: (s, f) =>
      folded(
        s.humanTasksOpen,
        (h) => key(fold(f.namespace, h.namespace)),
        (h) => h.count,
      ),
  },
  {
    name: 'weft_timers_due',
    help: 'Timers whose time has come and that have not fired yet; stays near 0 (read from the database, cached 5 s).',
    labels: [],
    series: (s) => new Map([[key(), s.timersDue]]),
  },
  {
    name: 'weft_blobs_awaiting_deletion',
    help: 'Blobs of purged runs listed for deletion from the blob store (read from the database, cached 5 s).',
    labels: [],
    series: (s) => new Map(s.blobDeletions ? [[key(), s.blobDeletions.listed]] : []),
  },
  {
    name: 'weft_blobs_deletion_failing',
    help: 'Listed blobs whose deletion from the blob store has failed and is retried with a backoff (cached 5 s).',
    labels: [],
    series: (s) => new Map(s.blobDeletions ? [[key(), s.blobDeletions.failing]] : []),
  },
];

/** Registers the gauges read from the store's workload at scrape time. */
export function workloadGauges(registry: Registry, cache: WorkloadCache, folds: LabelFolds): void {
  for (const spec of GAUGES) {
    new Gauge({
      name: spec.name,
      help: spec.help,
      labelNames: [...spec.labels],
      registers: [registry],
      async collect() {
        this.reset();
        const snapshot = await cache.get();
        if (!snapshot) return;
        for (const [k, v] of spec.series(snapshot, folds)) {
          const values = JSON.parse(k) as string[];
          const labels = Object.fromEntries(spec.labels.map((l, i) => [l, values[i]!]));
          this.set(labels, v);
        }
      },
    });
  }
}
