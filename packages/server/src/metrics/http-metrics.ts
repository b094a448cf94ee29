import type { FastifyInstance } from 'fastify';
import { Histogram, type Registry } from 'prom-client';
import { FAST_BUCKETS } from './prom-meter.js';

/** The route label of a request that matched no route: its URL is not a label (unbounded). */
export const UNMATCHED_ROUTE = '(unmatched)';

/**
 * Times every HTTP request, labelled by method, the route's pattern (`/v1/runs/:id`, never the URL itself,
 * so the labels are bounded by the route table) and status code. Long polls and event streams are timed
 * too: their time is how long they waited.
 */
export function installHttpMetrics(app: FastifyInstance, registry: Registry): void {
  const seconds = new Histogram({
    name: 'weft_http_request_duration_seconds',
    help: 'HTTP requests by method, route pattern and status code, from arrival to the end of the answer.',
    labelNames: ['method', 'route', 'status'],
    buckets: FAST_BUCKETS,
    registers: [registry],
  });
  // Callback style: no promise per request.
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? UNMATCHED_ROUTE;
    seconds.observe(
      { method: request.method, route, status: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    );
    done();
  });
}
