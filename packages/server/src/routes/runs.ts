import { isWeftError, type Json, type RunAttributes, WeftError } from '@weft/core';
import type { Engine } from '@weft/engine';
import { isUuid } from '@weft/engine/internal';
import type { FastifyInstance } from 'fastify';
import { namespaceOf } from '../namespace.js';
import { traceContextOf } from '../request-tracing.js';
import { historyJson, runJson, taskJson } from '../wire.js';
import { actorOf, keyNameOf } from './audit.js';
import { digitsField, versionField } from './fields.js';
import { archivedRunJson } from './retention.js';

const startSchema = {
  body: {
    type: 'object',
    required: ['definition'],
    additionalProperties: false,
    properties: {
      definition: { type: 'string', minLength: 1 },
      version: versionField,
      input: {},
      idempotency_key: { type: 'string', minLength: 1, maxLength: 500 },
      on_duplicate: { type: 'string', enum: ['return', 'error'] },
      attributes: {
        type: 'object',
        maxProperties: 32,
        additionalProperties: { anyOf: [{ type: 'string' }, { type: 'number' }, { type: 'boolean' }] },
        description: 'Search attributes: names to text (at most 256 characters), numbers or booleans',
      },
    },
  },
};

const historyQuery = {
  type: 'object',
  properties: {
    after: { ...digitsField(), description: 'events after this sequence number (default 0)' },
    limit: { ...digitsField(4), description: 'most events answered, 1 to 1000 (default 200)' },
  },
};

const batchSchema = {
  body: {
    type: 'object',
    required: ['definition', 'inputs'],
    additionalProperties: false,
    properties: {
      definition: { type: 'string', minLength: 1 },
      version: versionField,
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
      attributes?: RunAttributes;
    };
  }>('/v1/runs', { schema: startSchema, config: { auth: 'operate' } }, async (request, reply) => {
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
      ...(request.body.attributes !== undefined ? { attributes: request.body.attributes } : {}),
      ...keyNameOf(request),
      ...traceContextOf(request),
    });
    const shown = await engine.context.payloads.resolveFields(run, ['input', 'output']);
    // 201 for a new run, 200 for the run an earlier start with the same key made.
    return reply.status(created ? 201 : 200).send({ ...runJson(shown), created });
  });

  app.post<{ Body: { definition: string; version?: number; inputs: Json[] } }>(
    '/v1/runs/batch',
    { schema: batchSchema, config: { auth: 'operate' } },
    async (request, reply) => {
      const { definition, version, inputs } = request.body;
      const namespace = namespaceOf(request);
      // Every start of the batch goes through the same batched path as single starts: they share
      // transactions, and a bad input fails alone.
      const items = await Promise.all(
        inputs.map((input) =>
          engine.runs
            .start({
              namespace,
              definition,
              ...(version !== undefined ? { version } : {}),
              input,
              ...traceContextOf(request),
            })
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

  app.get<{ Params: { id: string } }>('/v1/runs/:id', { config: { auth: 'read' } }, async (request) => {
    const p = engine.context.payloads;
    const found = await getRun(engine, request.params.id, namespaceOf(request)).catch(async (e) => {
      // A run deleted by retention after it was archived is read back from its archive document.
      const doc =
        isWeftError(e) && e.code === 'run_not_found'
          ? await engine.retention.archived(request.params.id)
          : null;
      if (doc && doc.run.namespace === namespaceOf(request)) return doc;
      throw e;
    });
    if ('format' in found) return archivedRunJson(found);
    const run = await p.resolveFields(found, ['input', 'output']);
    const tasks = await Promise.all(
      (await engine.context.store.listTasks(run.id)).map((t) => p.resolveFields(t, ['input', 'output'])),
    );
    return { ...runJson(run), tasks: tasks.map(taskJson) };
  });

  app.post<{ Params: { id: string }; Body: { reason?: string; by?: string } | null }>(
    '/v1/runs/:id/cancel',
    { schema: reasonSchema, config: { auth: 'operate' } },
    async (request) => {
      checkId(request.params.id);
      const run = await engine.runs.cancel(
        request.params.id,
        actorOf(request, request.body?.by),
        request.body?.reason,
        namespaceOf(request),
      );
      return runJson(await engine.context.payloads.resolveFields(run, ['input', 'output']));
    },
  );

  app.get<{ Params: { id: string }; Querystring: { after?: string; limit?: string } }>(
    '/v1/runs/:id/history',
    // Described for the OpenAPI document; the handler checks the values and says what is wrong.
    { config: { auth: 'read' }, schema: { querystring: historyQuery } },
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
