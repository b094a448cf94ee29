import type { Engine } from '@weft/engine';
import type { FastifyInstance } from 'fastify';
import { namespaceOf } from '../namespace.js';

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
// TODO(auth): once API keys with roles land, setting and deleting need the admin role and listing names the
// read role: declare `config: { auth: 'admin' }` / `config: { auth: 'read' }` on these routes.
export function secretRoutes(app: FastifyInstance, engine: Engine): void {
  app.get('/v1/secrets', async (request) => ({
    items: (await engine.secrets.list(namespaceOf(request))).map((s) => ({
      name: s.name,
      updated_at: s.updatedAt.toISOString(),
    })),
  }));

  app.put<{ Params: { name: string }; Body: { value: string } }>(
    '/v1/secrets/:name',
    { schema: secretBody },
    async (request) => {
      await engine.secrets.set(namespaceOf(request), request.params.name, request.body.value);
      return { name: request.params.name, set: true };
    },
  );

  app.delete<{ Params: { name: string } }>('/v1/secrets/:name', async (request) => {
    await engine.secrets.delete(namespaceOf(request), request.params.name);
    return { deleted: true };
  });
}
