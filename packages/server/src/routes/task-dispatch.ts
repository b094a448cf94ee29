import type { Engine } from '@weft/engine';
import type { FastifyInstance } from 'fastify';
import { namespaceOf } from '../namespace.js';
import { leasedJson } from '../wire.js';
import type { WorkerSightings } from '../worker-sightings.js';
import { attemptField, uuidField } from './fields.js';

/** How this server hands tasks to workers, as workers are told. */
export type DispatchInfo =
  | { readonly kind: 'table' }
  | { readonly kind: 'redis'; readonly streamPrefix: string };

const uuid = uuidField;

/**
 * The worker protocol's dispatch half. `GET /v1/tasks/dispatch` says where task messages are published
 * (the table queue, polled here, or Redis streams). `POST /v1/tasks/lease` leases tasks named by such
 * messages: only those still queued at the named attempt, with a fresh fencing token, so a duplicate or
 * stale message leases nothing.
 */
export function taskDispatchRoutes(
  app: FastifyInstance,
  engine: Engine,
  dispatch: DispatchInfo,
  sightings?: WorkerSightings,
): void {
  app.get('/v1/tasks/dispatch', { config: { auth: 'connect' } }, async () =>
    dispatch.kind === 'redis'
      ? { dispatcher: 'redis', stream_prefix: dispatch.streamPrefix }
      : { dispatcher: 'table' },
  );

  app.post<{
    Body: {
      worker: string;
      task_types: string[];
      tasks: { run_id: string; task_id: string; attempt: number }[];
    };
  }>(
    '/v1/tasks/lease',
    {
      config: { auth: 'work' },
      schema: {
        body: {
          type: 'object',
          required: ['worker', 'task_types', 'tasks'],
          additionalProperties: false,
          properties: {
            worker: { type: 'string', minLength: 1, maxLength: 200 },
            task_types: {
              type: 'array',
              minItems: 1,
              maxItems: 100,
              items: { type: 'string', minLength: 1, maxLength: 128 },
            },
            tasks: {
              type: 'array',
              maxItems: 500,
              items: {
                type: 'object',
                required: ['run_id', 'task_id', 'attempt'],
                additionalProperties: false,
                properties: { run_id: uuid, task_id: uuid, attempt: attemptField },
              },
            },
          },
        },
      },
    },
    async (request) => {
      sightings?.seen(namespaceOf(request), request.body.worker, request.body.task_types);
      const leased = await engine.tasks.leaseById({
        namespace: namespaceOf(request),
        worker: request.body.worker,
        taskTypes: request.body.task_types,
        tasks: request.body.tasks.map((t) => ({ runId: t.run_id, taskId: t.task_id, attempt: t.attempt })),
      });
      const terms = engine.tasks.terms;
      return { tasks: leased.map(leasedJson), lease_ms: terms.leaseMs, heartbeat_ms: terms.heartbeatMs };
    },
  );
}
