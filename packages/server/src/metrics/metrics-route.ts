import type { Engine } from '@weft/engine';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { engineCounters } from './engine-counters.js';
import { installHttpMetrics } from './http-metrics.js';
import { labelFolds } from './label-fold.js';
import { PromMeter } from './prom-meter.js';
import { WorkloadCache, workloadGauges } from './workload-gauges.js';

/** The metrics of one server: a registry fed by the engine's meter, its counters and the store's workload. */
export interface ServerMetrics {
  readonly registry: Registry;
}

/**
 * Builds the server's metrics and makes the engine measure into them: Node.js's default metrics under their
 * standard names (`process_*`, `nodejs_*`), the engine's counters, the labelled run, task and decision
 * metrics, and the workload gauges read from the store at scrape time.
 */
export function createServerMetrics(engine: Engine, logger: FastifyBaseLogger | null): ServerMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const folds = labelFolds();
  engine.context.stats.meter = new PromMeter(registry, folds);
  engineCounters(registry, engine);
  workloadGauges(registry, new WorkloadCache(engine.context.store, logger), folds);
  return { registry };
}

/** Times every request of `app` (install before the routes). */
export function installRequestMetrics(app: FastifyInstance, metrics: ServerMetrics): void {
  installHttpMetrics(app, metrics.registry);
}

/** Serves the metrics at GET /metrics, in Prometheus format. */
export function metricsRoute(app: FastifyInstance, metrics: ServerMetrics): void {
  app.get('/metrics', { config: { auth: 'metrics' } }, async (_request, reply) => {
    reply.header('content-type', metrics.registry.contentType);
    return metrics.registry.metrics();
  });
}
