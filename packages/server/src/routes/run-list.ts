import { type RunStatus, WeftError } from '@weft/core';
import { type Engine, type RunFilter, type RunPayloadField, type RunRecord, runIdRange } from '@weft/engine';
import { isUuid } from '@weft/engine/internal';
import type { FastifyInstance } from 'fastify';
import { namespaceOf } from '../namespace.js';
import { runJson } from '../wire.js';

/** Run statuses, as filters take them. */
export const RUN_STATUSES = [
  'running',
  'paused',
  'compensating',
  'completed',
  'failed',
  'cancelled',
  'terminated',
];

/** Counts stop here: a preview of a bulk action needs "at least this many", not a scan of every run. */
export const COUNT_CAP = 100_000;

/** A search attribute filter, `name:value`, as a query or body field. */
export const ATTR_FIELD = {
  type: 'string',
  pattern: '^[A-Za-z_][A-Za-z0-9_.-]{0,63}:',
  maxLength: 321,
  description: 'Only runs with this search attribute: `name:value` (`customer:42` matches 42 and "42")',
};

/** The filters of `GET /v1/runs` and `GET /v1/runs/count`, as query-string fields. */
const filterFields = {
  status: { type: 'string', enum: RUN_STATUSES },
  definition: { type: 'string', minLength: 1, maxLength: 200 },
  version: { type: 'string', pattern: '^[1-9][0-9]{0,8}$' },
  started_before: { type: 'string', minLength: 1, maxLength: 64 },
  started_after: { type: 'string', minLength: 1, maxLength: 64 },
  run_id: { type: 'string', pattern: '^[0-9a-fA-F-]{1,36}$' },
  idempotency_key: { type: 'string', minLength: 1, maxLength: 500 },
  attr: ATTR_FIELD,
};

/** The filter fields as they arrive. */
export interface FilterQuery {
  status?: string;
  definition?: string;
  version?: string;
  started_before?: string;
  started_after?: string;
  run_id?: string;
  idempotency_key?: string;
  attr?: string;
}

/** `name:value`, split at the first colon (a value may hold colons). */
export function attributeOf(attr: string): { key: string; value: string } {
  const at = attr.indexOf(':');
  const value = attr.slice(at + 1);
  if (value.length > 256)
    throw new WeftError(
      'bad_request',
      'attr: the value is longer than 256 characters, so no run can have it',
      400,
    );
  return { key: attr.slice(0, at), value };
}

/** Turns filter fields into a run filter (less its page), saying which field is wrong when one is. */
export function runFilterOf(namespace: string, q: FilterQuery): Omit<RunFilter, 'limit' | 'cursor'> {
  if (q.version !== undefined && q.definition === undefined)
    throw new WeftError('bad_request', 'version needs definition: versions are numbered per definition', 400);
  if (q.run_id !== undefined && !runIdRange(q.run_id))
    throw new WeftError(
      'bad_request',
      'run_id must be a run id or its first characters (hex digits and -)',
      400,
    );
  const time = (field: 'started_before' | 'started_after') => {
    const value = q[field];
    if (value === undefined) return undefined;
    const at = new Date(value);
    if (Number.isNaN(at.getTime()))
      throw new WeftError('bad_request', `${field} must be a time such as 2026-01-31T12:00:00Z`, 400);
    return at;
  };
  const before = time('started_before');
  const after = time('started_after');
  return {
    namespace,
    ...(q.status ? { status: q.status as RunStatus } : {}),
    ...(q.definition ? { definition: q.definition } : {}),
    ...(q.version ? { version: Number(q.version) } : {}),
    ...(before ? { startedBefore: before } : {}),
    ...(after ? { startedAfter: after } : {}),
    ...(q.run_id ? { runId: q.run_id } : {}),
    ...(q.idempotency_key ? { idempotencyKey: q.idempotency_key } : {}),
    ...(q.attr ? { attribute: attributeOf(q.attr) } : {}),
  };
}

/** The payloads `?include=` asks for, each once. */
function includedPayloads(include: string | undefined): RunPayloadField[] {
  return [
    ...new Set(
      (include ?? '').split(',').filter((f): f is RunPayloadField => f === 'input' || f === 'output'),
    ),
  ];
}

/** A listed run: the run without the payloads the list did not ask for. */
function runSummaryJson(run: RunRecord, include: readonly RunPayloadField[]) {
  const { input, output, ...summary } = runJson(run);
  return {
    ...summary,
    ...(include.includes('input') ? { input } : {}),
    ...(include.includes('output') ? { output } : {}),
  };
}

/**
 * Listing runs (`GET /v1/runs`: summaries, newest first, a page at a time; `?include=input,output` adds
 * payloads) and counting them (`GET /v1/runs/count`:
 * how many match, up to 100,000, for the preview of a bulk action).
 */
export function runListRoutes(app: FastifyInstance, engine: Engine): void {
  app.get<{ Querystring: FilterQuery & { cursor?: string; limit?: string; include?: string } }>(
    '/v1/runs',
    {
      config: { auth: 'read' },
      schema: {
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            ...filterFields,
            cursor: { type: 'string', maxLength: 64 },
            limit: { type: 'string', pattern: '^[0-9]{1,4}$' },
            include: {
              type: 'string',
              pattern: '^(input|output)(,(input|output))?$',
              description:
                'Payloads to add to each run, comma-separated (`input`, `output`): a list answers summaries without them',
            },
          },
        },
      },
    },
    async (request) => {
      const { cursor } = request.query;
      const limit = request.query.limit === undefined ? 50 : Number(request.query.limit);
      if (limit < 1 || limit > 500)
        throw new WeftError('bad_request', 'limit must be a whole number from 1 to 500', 400);
      if (cursor !== undefined && !isUuid(cursor))
        throw new WeftError(
          'bad_cursor',
          `cursor ${JSON.stringify(cursor)} is not one this API gave out`,
          400,
        );
      const include = includedPayloads(request.query.include);
      const filter: RunFilter = {
        ...runFilterOf(namespaceOf(request), request.query),
        limit,
        include,
        ...(cursor ? { cursor } : {}),
      };
      const page = await engine.context.store.listRuns(filter);
      const items = await Promise.all(
        page.items.map((r) => engine.context.payloads.resolveFields(r, include)),
      );
      return { items: items.map((r) => runSummaryJson(r, include)), next_cursor: page.next };
    },
  );

  app.get<{ Querystring: FilterQuery }>(
    '/v1/runs/count',
    {
      config: { auth: 'read' },
      schema: { querystring: { type: 'object', additionalProperties: false, properties: filterFields } },
    },
    async (request) => {
      const filter = runFilterOf(namespaceOf(request), request.query);
      const count = await engine.context.store.countMatchingRuns(filter, COUNT_CAP);
      return { count, capped: count >= COUNT_CAP };
    },
  );
}
