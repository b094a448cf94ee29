import { parseDefinition, WeftError } from '@weft/core';
import type { Engine } from '@weft/engine';
import type { FastifyInstance } from 'fastify';
import { namespaceOf } from '../namespace.js';
import type { WorkerSightings } from '../worker-sightings.js';

/** Workers are listed when seen within this window, unless the request says otherwise. */
const DEFAULT_WITHIN_MS = 10 * 60_000;

const workersQuery = {
  querystring: {
    type: 'object',
    additionalProperties: false,
    properties: { within_ms: { type: 'string', pattern: '^[0-9]{1,9}$' } },
  },
};

/**
 * What operators (and the web console) read beside runs: namespaces, workers seen recently with the task
 * types they ask for, the outbox backlog per destination, and a definition checked without deploying it.
 */
export function operatorReadRoutes(app: FastifyInstance, engine: Engine, sightings: WorkerSightings): void {
  // A key limited to some namespaces sees only those.
  app.get('/v1/namespaces', { config: { auth: 'read' } }, async (request) => {
    const mine = request.principal?.namespaces ?? null;
    const all = await engine.context.store.listNamespaces();
    return { items: mine === null ? all : all.filter((n) => mine.includes(n)) };
  });

  app.get<{ Querystring: { within_ms?: string } }>(
    '/v1/workers',
    { schema: workersQuery, config: { auth: 'read' } },
    async (request) => {
      const within =
        request.query.within_ms === undefined ? DEFAULT_WITHIN_MS : Number(request.query.within_ms);
      if (within < 1000 || within > 86_400_000)
        throw new WeftError('bad_request', 'within_ms must be from 1000 (1 s) to 86400000 (1 day)', 400);
      const namespace = namespaceOf(request);
      const stored = await engine.context.store.listWorkers(namespace, new Date(Date.now() - within));
      const byName = new Map(stored.map((w) => [w.name, w]));
      // Workers seen since the last write are shown too, with the types they asked for most recently.
      for (const w of sightings.unwritten(namespace)) byName.set(w.name, { ...byName.get(w.name), ...w });
      const items = [...byName.values()]
        .sort((a, b) => b.lastSeenAt.getTime() - a.lastSeenAt.getTime() || a.name.localeCompare(b.name))
        .map((w) => ({
          name: w.name,
          task_types: [...w.taskTypes].sort(),
          first_seen_at: (w.firstSeenAt ?? w.lastSeenAt).toISOString(),
          last_seen_at: w.lastSeenAt.toISOString(),
        }));
      return { items, seen_within_ms: within };
    },
  );

  app.get('/v1/outbox', { config: { auth: 'read' } }, async (request) => ({
    items: (await engine.context.store.outboxBacklog(namespaceOf(request))).map((b) => ({
      destination: b.destination,
      pending: b.pending,
      retrying: b.retrying,
      dead: b.dead,
      oldest_at: b.oldestAt?.toISOString() ?? null,
      next_attempt_at: b.nextAttemptAt?.toISOString() ?? null,
      last_error: b.lastError,
    })),
  }));

  app.post('/v1/definitions/validate', { config: { auth: 'read' } }, async (request) => {
    const body = request.body;
    const source = typeof body === 'string' ? body : (body as { source?: unknown } | null)?.source;
    if (typeof source !== 'string' || source.trim() === '')
      throw new WeftError(
        'bad_request',
        'send the definition as YAML (content-type application/yaml) or as JSON {"source": "<yaml>"}',
        400,
      );
    const parsed = parseDefinition(source);
    return parsed.ok
      ? { valid: true, name: parsed.value.name, problems: [] }
      : { valid: false, problems: parsed.error };
  });
}
