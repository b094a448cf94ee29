import { type RunStatus, WeftError } from '@weft/core';
import { type BulkFilter, bulkOperatorAction, type Engine } from '@weft/engine';
import { isUuid } from '@weft/engine/internal';
import type { FastifyInstance } from 'fastify';
import { namespaceOf } from '../namespace.js';
import { actorOf, audit } from './audit.js';
import { versionField } from './fields.js';
import { ATTR_FIELD, attributeOf } from './run-list.js';

const RUN_STATUSES = ['running', 'paused', 'compensating', 'completed', 'failed', 'cancelled', 'terminated'];

interface BulkBody {
  action: 'cancel' | 'terminate' | 'retry';
  filter?: {
    definition?: string;
    version?: number;
    status?: RunStatus;
    started_before?: string;
    started_after?: string;
    run_id?: string;
    idempotency_key?: string;
    attr?: string;
  };
  by?: string;
  reason?: string;
  batch_size?: number;
  cursor?: string;
  dry_run?: boolean;
}

const schema = {
  body: {
    type: 'object',
    required: ['action'],
    additionalProperties: false,
    properties: {
      action: { type: 'string', enum: ['cancel', 'terminate', 'retry'] },
      filter: {
        type: 'object',
        additionalProperties: false,
        properties: {
          definition: { type: 'string', minLength: 1 },
          version: versionField,
          status: { type: 'string', enum: RUN_STATUSES },
          started_before: { type: 'string', minLength: 1 },
          started_after: { type: 'string', minLength: 1 },
          run_id: { type: 'string', pattern: '^[0-9a-fA-F-]{1,36}$' },
          idempotency_key: { type: 'string', minLength: 1, maxLength: 500 },
          attr: ATTR_FIELD,
        },
      },
      by: { type: 'string', minLength: 1, maxLength: 200 },
      reason: { type: 'string', maxLength: 2000 },
      batch_size: { type: 'integer', minimum: 1, maximum: 1000 },
      cursor: { type: 'string' },
      dry_run: { type: 'boolean' },
    },
  },
};

/**
 * `POST /v1/runs/bulk`: cancel, terminate or retry the runs matching a filter, one batch per call (newest
 * first), each run in its own transaction. The answer says what was done and what was refused, and
 * `next_cursor` continues with the next batch (null when every matching run has been seen), so a caller
 * shows progress and no request runs for long.
 */
export function bulkRoutes(app: FastifyInstance, engine: Engine): void {
  app.post<{ Body: BulkBody }>('/v1/runs/bulk', { schema, config: { auth: 'operate' } }, async (request) => {
    const b = request.body;
    const f = b.filter ?? {};
    if (f.version !== undefined && f.definition === undefined)
      throw new WeftError(
        'bad_request',
        'filter.version needs filter.definition: versions are per definition',
        400,
      );
    if (b.cursor !== undefined && !isUuid(b.cursor))
      throw new WeftError(
        'bad_cursor',
        `cursor ${JSON.stringify(b.cursor)} is not one this API gave out`,
        400,
      );
    if (b.action === 'terminate' && !b.dry_run && !b.reason?.trim())
      throw new WeftError(
        'reason_required',
        'say why: terminating runs needs a reason, kept in their history',
        400,
      );
    const filter: BulkFilter = {
      ...(f.definition !== undefined ? { definition: f.definition } : {}),
      ...(f.version !== undefined ? { version: f.version } : {}),
      ...(f.status !== undefined ? { status: f.status } : {}),
      ...(f.started_before !== undefined ? { startedBefore: time('started_before', f.started_before) } : {}),
      ...(f.started_after !== undefined ? { startedAfter: time('started_after', f.started_after) } : {}),
      ...(f.run_id !== undefined ? { runId: f.run_id } : {}),
      ...(f.idempotency_key !== undefined ? { idempotencyKey: f.idempotency_key } : {}),
      ...(f.attr !== undefined ? { attribute: attributeOf(f.attr) } : {}),
    };
    const result = await bulkOperatorAction(engine.context.store, engine.control, {
      namespace: namespaceOf(request),
      action: b.action,
      filter,
      by: actorOf(request, b.by),
      ...(b.reason ? { reason: b.reason } : {}),
      batchSize: b.batch_size ?? 100,
      ...(b.cursor ? { cursor: b.cursor } : {}),
      maxBatches: 1,
      dryRun: b.dry_run ?? false,
    });
    if (!b.dry_run)
      await audit(request, 'runs.bulk', b.action, {
        filter: b.filter ?? {},
        done: result.done,
        refused: result.refused,
      });
    return {
      action: b.action,
      dry_run: b.dry_run ?? false,
      matched: result.matched,
      done: result.done,
      refused: result.refused,
      done_ids: result.doneIds,
      refusals: result.refusals.map((r) => ({ run_id: r.runId, code: r.code, message: r.message })),
      next_cursor: result.next,
    };
  });
}

function time(field: string, value: string): Date {
  const at = new Date(value);
  if (Number.isNaN(at.getTime()))
    throw new WeftError(
      'bad_request',
      `filter.${field} must be a time such as 2026-01-31T12:00:00Z, not ${JSON.stringify(value)}`,
      400,
    );
  return at;
}
