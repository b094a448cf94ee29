import { type Json, WeftError } from '@weft/core';
import type { Engine, HumanTaskState } from '@weft/engine';
import { isUuid } from '@weft/engine/internal';
import type { FastifyInstance } from 'fastify';
import { namespaceOf } from '../namespace.js';
import { humanTaskJson } from '../wire-flow.js';
import { digitsField } from './fields.js';

const STATES = ['open', 'completed', 'expired', 'cancelled'];
const userBody = {
  body: {
    type: 'object',
    required: ['user'],
    additionalProperties: false,
    properties: { user: { type: 'string', minLength: 1, maxLength: 200 } },
  },
};
const completeBody = {
  body: {
    type: 'object',
    required: ['user'],
    additionalProperties: false,
    properties: { user: { type: 'string', minLength: 1, maxLength: 200 }, data: {} },
  },
};

function checkId(id: string): void {
  if (!isUuid(id))
    throw new WeftError('human_task_not_found', `there is no human task ${id} (task ids are UUIDs)`, 404);
}

/** The inbox's filters, described for the OpenAPI document; the handler checks the values. */
const inboxQuery = {
  type: 'object',
  properties: {
    state: { type: 'string', description: 'open, completed, expired or cancelled' },
    assignee: { type: 'string', maxLength: 200, description: 'only tasks assigned to this user' },
    claimed_by: { type: 'string', maxLength: 200, description: 'only tasks claimed by this user' },
    run_id: { type: 'string', maxLength: 36, description: 'only tasks of this run' },
    limit: { ...digitsField(4), description: 'most tasks answered, 1 to 500 (default 50)' },
  },
};

/** The inbox of human tasks: list, show, claim, release, complete. */
export function inboxRoutes(app: FastifyInstance, engine: Engine): void {
  app.get<{
    Querystring: { state?: string; assignee?: string; claimed_by?: string; run_id?: string; limit?: string };
  }>('/v1/inbox', { config: { auth: 'read' }, schema: { querystring: inboxQuery } }, async (request) => {
    const q = request.query;
    if (q.state !== undefined && !STATES.includes(q.state))
      throw new WeftError('bad_request', `state must be one of ${STATES.join(', ')}`, 400);
    const limit = q.limit === undefined ? 50 : Number(q.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 500)
      throw new WeftError('bad_request', 'limit must be a whole number from 1 to 500', 400);
    if (q.run_id !== undefined && !isUuid(q.run_id))
      throw new WeftError('bad_request', 'run_id must be a run id', 400);
    const items = await engine.inbox.list({
      namespace: namespaceOf(request),
      limit,
      ...(q.state ? { state: q.state as HumanTaskState } : {}),
      ...(q.assignee ? { assignee: q.assignee } : {}),
      ...(q.claimed_by ? { claimedBy: q.claimed_by } : {}),
      ...(q.run_id ? { runId: q.run_id } : {}),
    });
    return { items: items.map(humanTaskJson) };
  });

  app.get<{ Params: { id: string } }>('/v1/inbox/:id', { config: { auth: 'read' } }, async (request) => {
    checkId(request.params.id);
    return humanTaskJson(await engine.inbox.get(namespaceOf(request), request.params.id));
  });

  for (const verb of ['claim', 'release'] as const) {
    app.post<{ Params: { id: string }; Body: { user: string } }>(
      `/v1/inbox/:id/${verb}`,
      { schema: userBody, config: { auth: 'operate' } },
      async (request) => {
        checkId(request.params.id);
        const ns = namespaceOf(request);
        const task =
          verb === 'claim'
            ? await engine.inbox.claim(ns, request.params.id, request.body.user)
            : await engine.inbox.release(ns, request.params.id, request.body.user);
        return humanTaskJson(task);
      },
    );
  }

  app.post<{ Params: { id: string }; Body: { user: string; data?: Json } }>(
    '/v1/inbox/:id/complete',
    { schema: completeBody, config: { auth: 'operate' } },
    async (request) => {
      checkId(request.params.id);
      const task = await engine.inbox.complete(
        namespaceOf(request),
        request.params.id,
        request.body.user,
        request.body.data === undefined ? null : request.body.data,
      );
      return humanTaskJson(task);
    },
  );
}
