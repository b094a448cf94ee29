import { WeftError } from '@weft/core';
import type { Engine } from '@weft/engine';
import type { FastifyInstance } from 'fastify';
import { namespaceOf } from '../namespace.js';
import { deadLetterJson } from '../wire.js';
import { audit } from './audit.js';
import { digitsField, ROW_ID_PATTERN } from './fields.js';

const replaySchema = {
  body: {
    type: ['object', 'null'],
    additionalProperties: false,
    properties: {
      ids: { type: 'array', maxItems: 1000, items: { type: 'string', pattern: ROW_ID_PATTERN } },
      destination: { type: 'string', minLength: 1, maxLength: 200 },
    },
  },
};

/**
 * Dead letters: outbox messages the relay gave up on after its retries (or could never deliver). They are
 * kept, listed here, and put back for delivery by a replay, which resets their attempts.
 */
export function deadLetterRoutes(app: FastifyInstance, engine: Engine): void {
  app.get<{ Querystring: { destination?: string; cursor?: string; limit?: string } }>(
    '/v1/dead-letters',
    // Described for the OpenAPI document, sized to the columns; the handler says what else is wrong.
    {
      config: { auth: 'read' },
      schema: {
        querystring: {
          type: 'object',
          properties: {
            destination: { type: 'string', maxLength: 200, description: 'only this destination' },
            cursor: { type: 'string', maxLength: 18, description: 'next_cursor of the previous page' },
            limit: { ...digitsField(4), description: 'most dead letters answered, 1 to 500 (default 50)' },
          },
        },
      },
    },
    async (request) => {
      const { destination, cursor } = request.query;
      const limit = request.query.limit === undefined ? 50 : Number(request.query.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 500)
        throw new WeftError('bad_request', 'limit must be a whole number from 1 to 500', 400);
      if (cursor !== undefined && !new RegExp(ROW_ID_PATTERN).test(cursor))
        throw new WeftError(
          'bad_cursor',
          `cursor ${JSON.stringify(cursor)} is not one this API gave out`,
          400,
        );
      const page = await engine.context.store.listDeadLetters({
        namespace: namespaceOf(request),
        limit,
        ...(destination ? { destination } : {}),
        ...(cursor ? { cursor } : {}),
      });
      return { items: page.items.map(deadLetterJson), next_cursor: page.next };
    },
  );

  app.post<{ Body: { ids?: string[]; destination?: string } | null }>(
    '/v1/dead-letters/replay',
    { schema: replaySchema, config: { auth: 'operate' } },
    async (request) => {
      const ids = request.body?.ids;
      const destination = request.body?.destination;
      const replayed = await replay(engine, namespaceOf(request), ids, destination);
      await audit(request, 'dead_letters.replay', destination ?? null, { ids: ids ?? 'all', replayed });
      return { replayed };
    },
  );

  app.post<{ Params: { id: string } }>(
    '/v1/dead-letters/:id/replay',
    { config: { auth: 'operate' } },
    async (request) => {
      if (!new RegExp(ROW_ID_PATTERN).test(request.params.id))
        throw new WeftError('dead_letter_not_found', `there is no dead letter ${request.params.id}`, 404);
      const replayed = await replay(engine, namespaceOf(request), [request.params.id], undefined);
      if (replayed === 0)
        throw new WeftError(
          'dead_letter_not_found',
          `there is no dead letter ${request.params.id} in this namespace (it may have been replayed already)`,
          404,
        );
      await audit(request, 'dead_letters.replay', request.params.id, { replayed });
      return { replayed };
    },
  );
}

async function replay(
  engine: Engine,
  namespace: string,
  ids: string[] | undefined,
  destination: string | undefined,
): Promise<number> {
  const replayed = await engine.context.store.transaction((tx) =>
    tx.replayDeadLetters({ namespace, ...(ids ? { ids } : {}), ...(destination ? { destination } : {}) }),
  );
  if (replayed > 0) engine.context.wakeups.announce([{ kind: 'outbox' }]);
  return replayed;
}
