import type { Engine } from '@weft/engine';
import type { FastifyInstance } from 'fastify';
import { namespaceOf } from '../namespace.js';
import { audit } from './audit.js';

const secretBody = {
  body: {
    type: 'object',
    required: ['value'],
    additionalProperties: false,
    properties: { value: { type: 'string', minLength: 1 } },
  },
};

/**
 * Secrets of the request's namespace: set (PUT), list names (GET), delete. A value goes in and never comes
 * out: no route answers with it.
 */
export function secretRoutes(app: FastifyInstance, engine: Engine): void {
  app.get('/v1/secrets', { config: { auth: 'read' } }, async (request) => ({
    items: (await engine.secrets.list(namespaceOf(request))).map((s) => ({
      name: s.name,
      updated_at: s.updatedAt.toISOString(),
    })),
  }));

  app.put<{ Params: { name: string }; Body: { value: string } }>(
    '/v1/secrets/:name',
    { schema: secretBody, config: { auth: 'admin' } },
    async (request) => {
      await engine.secrets.set(namespaceOf(request), request.params.name, request.body.value);
      await audit(request, 'secret.set', request.params.name);
      return { name: request.params.name, set: true };
    },
  );

  app.delete<{ Params: { name: string } }>(
    '/v1/secrets/:name',
    { config: { auth: 'admin' } },
    async (request) => {
      await engine.secrets.delete(namespaceOf(request), request.params.name);
      await audit(request, 'secret.delete', request.params.name);
      return { deleted: true };
    },
  );
}
