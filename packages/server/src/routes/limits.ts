import { parseDuration, WeftError } from '@weft/core';
import { type Engine, LIMIT_KINDS, type LimitKind } from '@weft/engine';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { namespaceOf } from '../namespace.js';
import { limitJson } from '../wire-flow.js';
import { audit } from './audit.js';

const limitBody = {
  body: {
    type: 'object',
    required: ['max'],
    additionalProperties: false,
    properties: { max: { type: 'integer', minimum: 0, maximum: 10_000_000 }, per: { type: 'string' } },
  },
};

function kindOf(value: string): LimitKind {
  if (!(LIMIT_KINDS as readonly string[]).includes(value))
    throw new WeftError(
      'bad_limit',
      `the kind of limit must be one of ${LIMIT_KINDS.join(', ')}, not ${JSON.stringify(value)}`,
      400,
    );
  return value as LimitKind;
}

/** Limits of the request's namespace: list with use, set, lift. A quota has no name: `/v1/limits/quota`. */
export function limitRoutes(app: FastifyInstance, engine: Engine): void {
  app.get('/v1/limits', { config: { auth: 'read' } }, async (request) => ({
    items: (await engine.limits.list(namespaceOf(request))).map(limitJson),
  }));

  const set = async (
    kind: LimitKind,
    name: string,
    body: { max: number; per?: string },
    request: FastifyRequest,
  ) => {
    const namespace = namespaceOf(request);
    let windowMs: number | null = null;
    if (body.per !== undefined) {
      const parsed = parseDuration(body.per);
      if (!parsed.ok) throw new WeftError('bad_limit', `per: ${parsed.error}`, 400);
      windowMs = parsed.value;
    }
    await engine.limits.set({ namespace, kind, name, max: body.max, windowMs });
    await audit(request, 'limit.set', kind === 'quota' ? 'quota' : `${kind}/${name}`, body);
    const now = (await engine.limits.list(namespace)).find((l) => l.kind === kind && l.name === name);
    // Lifted by a request that came just after this one: answer with what this one set.
    return limitJson(now ?? { namespace, kind, name, max: body.max, windowMs, used: 0 });
  };
  app.put<{ Params: { kind: string; name: string }; Body: { max: number; per?: string } }>(
    '/v1/limits/:kind/:name',
    { schema: limitBody, config: { auth: 'admin' } },
    async (request) => set(kindOf(request.params.kind), request.params.name, request.body, request),
  );
  app.put<{ Body: { max: number } }>(
    '/v1/limits/quota',
    { schema: limitBody, config: { auth: 'admin' } },
    async (request) => set('quota', '', request.body, request),
  );

  const remove = async (kind: LimitKind, name: string, request: FastifyRequest) => {
    const namespace = namespaceOf(request);
    if (!(await engine.limits.delete(namespace, kind, name)))
      throw new WeftError(
        'limit_not_found',
        `there is no ${kind} limit ${JSON.stringify(name)} in namespace "${namespace}"`,
        404,
      );
    await audit(request, 'limit.lift', kind === 'quota' ? 'quota' : `${kind}/${name}`);
    return { deleted: true };
  };
  app.delete<{ Params: { kind: string; name: string } }>(
    '/v1/limits/:kind/:name',
    { config: { auth: 'admin' } },
    async (request) => remove(kindOf(request.params.kind), request.params.name, request),
  );
  app.delete('/v1/limits/quota', { config: { auth: 'admin' } }, async (request) =>
    remove('quota', '', request),
  );
}
