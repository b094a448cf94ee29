import { type Json, WeftError } from '@weft/core';
import type { Engine } from '@weft/engine';
import { isUuid } from '@weft/engine/internal';
import type { FastifyInstance } from 'fastify';
import { namespaceOf } from '../namespace.js';
import { runJson } from '../wire.js';
import { actorOf } from './audit.js';
import { versionField } from './fields.js';

interface ForkBody {
  input?: Json;
  version?: number;
  up_to_node?: string;
  by?: string;
}

const forkSchema = {
  body: {
    type: ['object', 'null'],
    additionalProperties: false,
    properties: {
      input: {},
      version: versionField,
      up_to_node: { type: 'string', minLength: 1, maxLength: 64 },
      by: { type: 'string', minLength: 1, maxLength: 200 },
    },
  },
};

/**
 * Forks. `POST /v1/runs/{id}/fork` starts a new run from a run, with another input and/or version, reusing
 * the outputs of `up_to_node` and every node before it; it answers 201 with the new run and `forked_from`.
 * `GET /v1/runs/{id}/forks` answers the run's links both ways: the run it was forked from, and its forks.
 */
export function forkRoutes(app: FastifyInstance, engine: Engine): void {
  app.post<{ Params: { id: string }; Body: ForkBody | null }>(
    '/v1/runs/:id/fork',
    { schema: forkSchema, config: { auth: 'operate' } },
    async (request, reply) => {
      const id = runId(request.params.id);
      const b = request.body ?? {};
      const run = await engine.forks.fork({
        namespace: namespaceOf(request),
        runId: id,
        ...(b.input !== undefined ? { input: b.input } : {}),
        ...(b.version !== undefined ? { version: b.version } : {}),
        ...(b.up_to_node !== undefined ? { upToNode: b.up_to_node } : {}),
        by: actorOf(request, b.by),
      });
      const shown = await engine.context.payloads.resolveFields(run, ['input', 'output']);
      return reply.status(201).send({ ...runJson(shown), forked_from: id, up_to_node: b.up_to_node ?? null });
    },
  );

  app.get<{ Params: { id: string } }>('/v1/runs/:id/forks', { config: { auth: 'read' } }, async (request) => {
    const id = runId(request.params.id);
    await engine.runs.get(id, namespaceOf(request));
    const links = await engine.context.store.forkLinks(id);
    return { run_id: id, forked_from: links.forkedFrom, up_to_node: links.upToNode, forks: links.forks };
  });
}

function runId(id: string): string {
  if (!isUuid(id)) throw new WeftError('run_not_found', `there is no run ${id} (run ids are UUIDs)`, 404);
  return id;
}
