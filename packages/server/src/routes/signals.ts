import type { Json } from '@weft/core';
import { WeftError } from '@weft/core';
import type { Engine } from '@weft/engine';
import { isUuid } from '@weft/engine/internal';
import type { FastifyInstance } from 'fastify';
import { namespaceOf } from '../namespace.js';
import { actorOf } from './audit.js';

const signalSchema = {
  body: {
    type: 'object',
    required: ['name'],
    additionalProperties: false,
    properties: {
      name: { type: 'string', minLength: 1, maxLength: 128 },
      data: {},
      correlation: { type: 'string', minLength: 1, maxLength: 200 },
      by: { type: 'string', maxLength: 200 },
    },
  },
};

/** Sending signals to runs: `POST /v1/runs/{id}/signals`. */
export function signalRoutes(app: FastifyInstance, engine: Engine): void {
  app.post<{
    Params: { id: string };
    Body: { name: string; data?: Json; correlation?: string; by?: string };
  }>(
    '/v1/runs/:id/signals',
    {
      schema: signalSchema,
      config: { auth: 'operate' },
      bodyLimit: engine.context.config.maxPayloadBytes + 64 * 1024,
    },
    async (request) => {
      const { id } = request.params;
      if (!isUuid(id)) throw new WeftError('run_not_found', `there is no run ${id} (run ids are UUIDs)`, 404);
      const { name, data, correlation, by } = request.body;
      const sent = await engine.signals.send({
        namespace: namespaceOf(request),
        runId: id,
        name,
        data: data === undefined ? null : data,
        ...(correlation !== undefined ? { correlation } : {}),
        by: actorOf(request, by),
      });
      return {
        signal_id: sent.signalId,
        outcome: sent.outcome,
        ...(sent.node !== undefined ? { node_id: sent.node, iteration: sent.iteration ?? '' } : {}),
      };
    },
  );
}
