import type { Engine, RepairRecord } from '@weft/engine';
import type { FastifyInstance } from 'fastify';
import { namespaceOf } from '../namespace.js';
import { ROW_ID_PATTERN, uuidField } from './fields.js';

const repairQuery = {
  querystring: {
    type: 'object',
    additionalProperties: false,
    properties: {
      run_id: uuidField,
      moved: { type: 'string', enum: ['true', 'false'] },
      limit: { type: 'string', pattern: '^(?:[1-9][0-9]?|[1-4][0-9]{2}|500)$' },
      before: { type: 'string', pattern: ROW_ID_PATTERN },
    },
  },
};

interface RepairQuery {
  run_id?: string;
  moved?: 'true' | 'false';
  limit?: string;
  before?: string;
}

/** A sweeper repair as the API shows it. */
export function repairJson(r: RepairRecord) {
  return {
    id: r.id,
    run_id: r.runId,
    definition: r.definition,
    repaired_at: r.repairedAt.toISOString(),
    found: {
      status: r.status,
      idle_ms: r.idleMs,
      last_event: r.lastEvent
        ? { seq: r.lastEvent.seq, type: r.lastEvent.type, node_id: r.lastEvent.nodeId, at: r.lastEvent.at }
        : null,
    },
    changed: {
      events: r.changed.events,
      tasks: r.changed.tasks,
      task_updates: r.changed.taskUpdates,
      timers: r.changed.timers,
      status: r.changed.status,
    },
    moved: r.moved,
    checked_at: r.checkedAt?.toISOString() ?? null,
  };
}

/**
 * `GET /v1/sweeper/repairs`: the sweeper's audit of the request's namespace, newest first: what each
 * repair found and changed, and whether the run moved after it. A store that keeps no audit lists none.
 */
export function sweeperRepairRoutes(app: FastifyInstance, engine: Engine): void {
  app.get<{ Querystring: RepairQuery }>(
    '/v1/sweeper/repairs',
    { schema: repairQuery, config: { auth: 'read' } },
    async (request) => {
      const q = request.query;
      const limit = Number(q.limit ?? 50);
      const store = engine.context.store;
      const items = store.listRepairs
        ? await store.listRepairs({
            namespace: namespaceOf(request),
            limit,
            ...(q.run_id ? { runId: q.run_id } : {}),
            ...(q.moved ? { moved: q.moved === 'true' } : {}),
            ...(q.before ? { before: q.before } : {}),
          })
        : [];
      return {
        items: items.map(repairJson),
        next_before: items.length === limit ? items[items.length - 1]!.id : null,
      };
    },
  );
}
