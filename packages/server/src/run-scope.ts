import type { Engine } from '@weft/engine';
import { isUuid } from '@weft/engine/internal';
import type { FastifyInstance } from 'fastify';
import { namespaceOf } from './namespace.js';

/**
 * Every route on one run (`/v1/runs/:id/...`: reads, history, live events, operator actions) answers 404
 * for a run of another namespace than the request's, before the route does anything. `GET /v1/runs/:id`
 * checks it itself, for archived runs too.
 */
export function scopeRunRoutes(app: FastifyInstance, engine: Engine): void {
  // Callback style: the other routes pass without a promise; a run route's check hands its promise back.
  app.addHook('preHandler', (request, _reply, done) => {
    if (!request.routeOptions.url?.startsWith('/v1/runs/:id')) return done();
    // Reading a run checks the namespace itself: a run deleted by retention is read from its archive.
    if (request.routeOptions.url === '/v1/runs/:id' && request.method === 'GET') return done();
    const id = (request.params as { id?: string }).id;
    if (id === undefined || !isUuid(id)) return done(); // the route answers that one itself
    return engine.runs.get(id, namespaceOf(request)).then(() => undefined);
  });
}
