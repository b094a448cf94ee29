import type { Engine } from '@weft/engine';
import { Counter, Gauge, type Registry } from 'prom-client';
import { unhandledErrorCount } from '../process-guard.js';

/**
 * The engine's plain counters (EngineStats, the sweeper's figures), read at scrape time: each scrape adds
 * what the engine counted since the last one.
 */
export function engineCounters(registry: Registry, engine: Engine): void {
  const stats = engine.context.stats;
  const counter = (name: string, help: string, read: () => number) => {
    let last = 0;
    new Counter({
      name,
      help,
      registers: [registry],
      collect() {
        const now = read();
        this.inc(now - last);
        last = now;
      },
    });
  };
  counter(
    'weft_events_decided_total',
    'Events decided (starts, reports, timers, operator actions).',
    () => stats.eventsDecided,
  );
  counter(
    'weft_node_instances_read_total',
    'Node instances read to decide events: follows the frontier, not run size.',
    () => stats.instancesRead,
  );
  counter('weft_reports_accepted_total', 'Worker reports applied.', () => stats.reportsAccepted);
  counter(
    'weft_reports_refused_total',
    'Worker reports refused (stale attempt or token, finished task, past deadline).',
    () => stats.reportsRefused,
  );
  counter(
    'weft_heartbeats_refused_total',
    'Heartbeats refused (stale lease, wrong attempt, finished task): answered lost, not written to history.',
    () => stats.heartbeatsRefused,
  );
  counter(
    'weft_tasks_leased_by_poll_total',
    'Tasks leased from the queue by a poll.',
    () => stats.leasedByPoll,
  );
  counter(
    'weft_tasks_leased_with_report_total',
    'Tasks handed to a worker in the answer to its report.',
    () => stats.leasedWithReport,
  );
  counter(
    'weft_tasks_handed_over_total',
    'Tasks handed to a waiting poll by the transaction that created them.',
    () => stats.leasedByHandover,
  );
  counter(
    'weft_decisions_deferred_total',
    'Background decisions that failed and were retried later.',
    () => stats.decisionsDeferred,
  );
  counter(
    'weft_db_statements_total',
    'Statements sent to PostgreSQL by the server (divided by steps: the statements a step costs).',
    () => stats.statementsSent,
  );
  counter(
    'weft_runs_purged_total',
    'Finished runs deleted by retention (its loop or a purge by hand), with everything that belonged to them.',
    () => stats.runsPurged,
  );
  counter(
    'weft_blobs_deleted_total',
    'Blobs of purged runs deleted from the blob store once no run referenced them.',
    () => stats.blobsDeleted,
  );
  counter(
    'weft_blob_delete_failures_total',
    'Deletions from the blob store that failed; the blob stays listed and is tried again after a backoff.',
    () => stats.blobDeleteFailures,
  );
  counter(
    'weft_runs_archived_total',
    'Runs archived to the blob store before retention deleted them.',
    () => stats.runsArchived,
  );
  counter('weft_sweeper_rounds_total', 'Rounds of the stuck-run sweeper.', () => engine.sweeper.stats.rounds);
  counter(
    'weft_sweeper_runs_repaired_total',
    'Runs the sweeper found stuck and repaired; stays 0 in a healthy system.',
    () => engine.sweeper.stats.repaired,
  );
  const checked = { true: 0, false: 0 };
  new Counter({
    name: 'weft_sweeper_repairs_checked_total',
    help: 'Sweeper repairs checked a round later, by whether the run moved after it (moved="false": a repair that did not help).',
    labelNames: ['moved'],
    registers: [registry],
    collect() {
      const now = { true: engine.sweeper.stats.checkedMoved, false: engine.sweeper.stats.checkedStuck };
      for (const k of ['true', 'false'] as const) {
        this.inc({ moved: k }, now[k] - checked[k]);
        checked[k] = now[k];
      }
    },
  });
  counter(
    'weft_unhandled_errors_total',
    'Unhandled rejections and uncaught exceptions the server process logged and survived; stays 0 (each is a bug).',
    unhandledErrorCount,
  );
  new Gauge({
    name: 'weft_polls_waiting',
    help: 'Worker polls waiting in this server.',
    registers: [registry],
    collect() {
      this.set(engine.context.wakeups.polls.size);
    },
  });
}
