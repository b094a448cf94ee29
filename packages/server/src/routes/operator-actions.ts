import { type Json, WeftError } from '@weft/core';
import type { Engine } from '@weft/engine';
import { isUuid } from '@weft/engine/internal';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { runJson } from '../wire.js';
import { actorOf } from './audit.js';

/** Who asks and why: every operator action takes these, and they are kept in the run's history. */
const asker = {
  by: { type: 'string', minLength: 1, maxLength: 200 },
  reason: { type: 'string', maxLength: 2000 },
};
const iteration = { type: 'string', maxLength: 256 };

function body(properties: Record<string, unknown>, required: string[] = []) {
  return {
    body: {
      type: required.length > 0 ? 'object' : ['object', 'null'],
      additionalProperties: false,
      required,
      properties: { ...asker, ...properties },
    },
  };
}

interface Asked {
  by?: string;
  reason?: string;
}

/** The key that asks (with the caller's own `by` beside it) and why. */
function askerOf(request: FastifyRequest, b: Asked | null | undefined): { by: string; reason?: string } {
  return { by: actorOf(request, b?.by), ...(b?.reason ? { reason: b.reason } : {}) };
}

/**
 * Operator actions: pause, resume, terminate, retry and rerun a run; skip, complete or fail one of its
 * tasks by hand (cancel is in runs.ts). Each answers with the run as it is after the action, or a 409
 * naming the run's (or task's) state when the action makes no sense in it.
 */
export function operatorActionRoutes(app: FastifyInstance, engine: Engine): void {
  const actions = engine.control;

  for (const verb of ['pause', 'resume', 'retry'] as const) {
    app.post<{ Params: { id: string }; Body: Asked | null }>(
      `/v1/runs/:id/${verb}`,
      { schema: body({}), config: { auth: 'operate' } },
      async (request) => {
        const id = runId(request.params.id);
        return runJson(await actions[verb](id, askerOf(request, request.body)));
      },
    );
  }

  app.post<{ Params: { id: string }; Body: Asked & { reason: string } }>(
    '/v1/runs/:id/terminate',
    {
      schema: body({ reason: { type: 'string', minLength: 1, maxLength: 2000 } }, ['reason']),
      config: { auth: 'operate' },
    },
    async (request) =>
      runJson(await actions.terminate(runId(request.params.id), askerOf(request, request.body))),
  );

  app.post<{ Params: { id: string }; Body: Asked & { node: string; iteration?: string } }>(
    '/v1/runs/:id/rerun',
    {
      schema: body({ node: { type: 'string', minLength: 1, maxLength: 64 }, iteration }, ['node']),
      config: { auth: 'operate' },
    },
    async (request) => {
      const { node, iteration: it } = request.body;
      const run = await actions.rerun(runId(request.params.id), node, {
        ...askerOf(request, request.body),
        ...(it !== undefined ? { iteration: it } : {}),
      });
      return runJson(run);
    },
  );

  app.post<{
    Params: { id: string; node: string };
    Body: (Asked & { iteration?: string; output?: Json }) | null;
  }>(
    '/v1/runs/:id/nodes/:node/skip',
    { schema: body({ iteration, output: {} }), config: { auth: 'operate' } },
    async (request) => {
      const b = request.body;
      const run = await actions.skipTask(runId(request.params.id), request.params.node, {
        ...askerOf(request, b),
        ...(b?.iteration !== undefined ? { iteration: b.iteration } : {}),
        ...(b?.output !== undefined ? { output: b.output } : {}),
      });
      return runJson(run);
    },
  );

  app.post<{ Params: { id: string; node: string }; Body: Asked & { iteration?: string; output: Json } }>(
    '/v1/runs/:id/nodes/:node/complete',
    { schema: body({ iteration, output: {} }, ['output']), config: { auth: 'operate' } },
    async (request) => {
      const b = request.body;
      const run = await actions.completeTask(runId(request.params.id), request.params.node, {
        ...askerOf(request, b),
        ...(b.iteration !== undefined ? { iteration: b.iteration } : {}),
        output: b.output,
      });
      return runJson(run);
    },
  );

  app.post<{
    Params: { id: string; node: string };
    Body: Asked & { iteration?: string; error: { message: string; retryable?: boolean; details?: Json } };
  }>(
    '/v1/runs/:id/nodes/:node/fail',
    {
      schema: body(
        {
          iteration,
          error: {
            type: 'object',
            required: ['message'],
            additionalProperties: false,
            properties: {
              message: { type: 'string', minLength: 1 },
              retryable: { type: 'boolean' },
              details: {},
            },
          },
        },
        ['error'],
      ),
      config: { auth: 'operate' },
    },
    async (request) => {
      const b = request.body;
      const run = await actions.failTask(runId(request.params.id), request.params.node, {
        ...askerOf(request, b),
        ...(b.iteration !== undefined ? { iteration: b.iteration } : {}),
        error: b.error,
      });
      return runJson(run);
    },
  );
}

/** A run id from the path; a malformed one is simply not a run (404), like an unknown one. */
export function runId(id: string): string {
  if (!isUuid(id)) throw new WeftError('run_not_found', `there is no run ${id} (run ids are UUIDs)`, 404);
  return id;
}
