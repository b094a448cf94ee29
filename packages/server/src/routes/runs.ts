import { type Json, WeftError } from '@weft/core';
import type { Engine, RunFilter } from '@weft/engine';
import { isUuid } from '@weft/engine/internal';
import type { FastifyInstance } from 'fastify';
import { namespaceOf } from '../namespace.js';
import { historyJson, runJson, taskJson } from '../wire.js';

const RUN_STATUSES = ['running', 'paused', 'compensating', 'completed', 'failed', 'cancelled', 'terminated'];

const startSchema = {
  body: {
    type: 'object',
    required: ['definition'],
    additionalProperties: false,
    properties: {
      definition: { type: 'string', minLength: 1 },
      version: { type: 'integer', minimum: 1 },
      input: {},
      idempotency_key: { type: 'string', minLength: 1, maxLength: 500 },
      on_duplicate: { type: 'string', enum: ['return', 'error'] },
    },
  },
};

const batchSchema = {
  body: {
    type: 'object',
    required: ['definition', 'inputs'],
    additionalProperties: false,
    properties: {
      definition: { type: 'string', minLength: 1 },
      version: { type: 'integer', minimum: 1 },
      inputs: { type: 'array', minItems: 1, maxItems: 1000 },
    },
  },
};

const reasonSchema = {
  body: {
    type: ['object', 'null'],
    additionalProperties: false,
    properties: { reason: { type: 'string', maxLength: 2000 }, by: { type: 'string', maxLength: 200 } },
  },
};

/** Starting, reading and cancelling runs. */
export function runRoutes(app: FastifyInstance, engine: Engine): void {
  app.post<{
    Body: {
      definition: string;
      version?: number;
      input?: Json;
      idempotency_key?: string;
      on_duplicate?: 'return' | 'error';
    };
  }>('/v1/runs', { schema: startSchema }, async (request, reply) => {
    const { definition, version, input, on_duplicate } = request.body;
    // The key may come in the body or as an Idempotency-Key header.
    const header = request.headers['idempotency-key'];
    const key = request.body.idempotency_key ?? (Array.isArray(header) ? header[0] : header);
    const { run, created } = await engine.runs.open({
      namespace: namespaceOf(request),
      definition,
      ...(version !== undefined ? { version } : {}),
      input: input === undefined ? {} : input,
      ...(key !== undefined ? { idempotencyKey: key } : {}),
      ...(on_duplicate !== undefined ? { onDuplicate: on_duplicate } : {}),
    });
    const shown = await engine.context.payloads.resolveFields(run, ['input', 'output']);
    // 201 for a new run, 200 for the run an earlier start with the same key made.
    return reply.status(created ? 201 : 200).send({ ...runJson(shown), created });
  });

  app.post<{ Body: { definition: string; version?: number; inputs: Json[] } }>(
    '/v1/runs/batch',
    { schema: batchSchema },
    async (request, reply) => {
      const { definition, version, inputs } = request.body;
      const namespace = namespaceOf(request);
      // Every start of the batch goes through the same batched path as single starts: they share
      // transactions, and a bad input fails alone.
      const items = await Promise.all(
        inputs.map((input) =>
          engine.runs
            .start({ namespace, definition, ...(version !== undefined ? { version } : {}), input })
            .then(
              (run) => runJson(run),
              (error: unknown) => {
                if (error instanceof WeftError && error.code !== 'definition_not_found') {
                  return { error: { code: error.code, message: error.message } };
                }
                throw error;
              },
            ),
        ),
      );
      return reply.status(201).send({ items });
    },
  );

  app.get<{
    Querystring: {
      status?: string;
      definition?: string;
      version?: string;
      started_before?: string;
      started_after?: string;
      cursor?: string;
      limit?: string;
    };
  }>('/v1/runs', async (request) => {
    const { status, definition, cursor } = request.query;
    const more = runFilterExtras(request.query);
    if (status !== undefined && !RUN_STATUSES.includes(status)) {
      throw new WeftError(
        'bad_request',
        `status must be one of ${RUN_STATUSES.join(', ')}, not ${JSON.stringify(status)}`,
        400,
      );
    }
    const limit = request.query.limit === undefined ? 50 : Number(request.query.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 500)
      throw new WeftError('bad_request', 'limit must be a whole number from 1 to 500', 400);
    if (cursor !== undefined && !isUuid(cursor))
      throw new WeftError('bad_cursor', `cursor ${JSON.stringify(cursor)} is not one this API gave out`, 400);
    const filter: RunFilter = {
      namespace: namespaceOf(request),
      limit,
      ...(status ? { status: status as RunFilter['status'] } : {}),
      ...(definition ? { definition } : {}),
      ...(cursor ? { cursor } : {}),
      ...more,
    };
    const page = await engine.context.store.listRuns(filter);
    const items = await Promise.all(
      page.items.map((r) => engine.context.payloads.resolveFields(r, ['input', 'output'])),
    );
    return { items: items.map(runJson), next_cursor: page.next };
  });

  app.get<{ Params: { id: string } }>('/v1/runs/:id', async (request) => {
    const p = engine.context.payloads;
    const run = await p.resolveFields(await getRun(engine, request.params.id, namespaceOf(request)), [
      'input',
      'output',
    ]);
    const tasks = await Promise.all(
      (await engine.context.store.listTasks(run.id)).map((t) => p.resolveFields(t, ['input', 'output'])),
    );
    return { ...runJson(run), tasks: tasks.map(taskJson) };
  });

  app.post<{ Params: { id: string }; Body: { reason?: string; by?: string } | null }>(
    '/v1/runs/:id/cancel',
    { schema: reasonSchema },
    async (request) => {
      checkId(request.params.id);
      const run = await engine.runs.cancel(
        request.params.id,
        request.body?.by ?? 'api',
        request.body?.reason,
        namespaceOf(request),
      );
      return runJson(await engine.context.payloads.resolveFields(run, ['input', 'output']));
    },
  );

  app.get<{ Params: { id: string }; Querystring: { after?: string; limit?: string } }>(
    '/v1/runs/:id/history',
    async (request) => {
      const run = await getRun(engine, request.params.id, namespaceOf(request));
      const after = request.query.after === undefined ? 0 : Number(request.query.after);
      const limit = request.query.limit === undefined ? 200 : Number(request.query.limit);
      if (!Number.isInteger(after) || after < 0)
        throw new WeftError('bad_request', 'after must be a sequence number (0 or more)', 400);
      if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
        throw new WeftError('bad_request', 'limit must be a whole number from 1 to 1000', 400);
      const events = await Promise.all(
        (await engine.context.store.readHistory(run.id, after, limit)).map((e) =>
          engine.context.payloads.resolveFields(e, ['data']),
        ),
      );
      return {
        events: events.map(historyJson),
        next_after: events.length === limit ? events[events.length - 1]!.seq : null,
      };
    },
  );
}

async function getRun(engine: Engine, id: string, namespace: string) {
  checkId(id);
  return engine.runs.get(id, namespace);
}

function checkId(id: string): void {
  if (!isUuid(id)) throw new WeftError('run_not_found', `there is no run ${id} (run ids are UUIDs)`, 404);
}

/** The version and start-time filters of `GET /v1/runs`. */
function runFilterExtras(q: {
  definition?: string;
  version?: string;
  started_before?: string;
  started_after?: string;
}) {
  const out: { version?: number; startedBefore?: Date; startedAfter?: Date } = {};
  if (q.version !== undefined) {
    const version = Number(q.version);
    if (!Number.isInteger(version) || version < 1 || q.definition === undefined)
      throw new WeftError(
        'bad_request',
        'version must be a whole number of at least 1, with definition',
        400,
      );
    out.version = version;
  }
  for (const [key, field] of [
    ['started_before', 'startedBefore'],
    ['started_after', 'startedAfter'],
  ] as const) {
    const value = q[key];
    if (value === undefined) continue;
    const at = new Date(value);
    if (Number.isNaN(at.getTime()))
      throw new WeftError('bad_request', `${key} must be a time such as 2026-01-31T12:00:00Z`, 400);
    out[field] = at;
  }
  return out;
}
