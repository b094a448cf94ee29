import { createRequire } from 'node:module';
import type { SwaggerOptions } from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';

/** Every error answer: a stable code and a message that says what to do. */
const errorSchema = {
  $id: 'Error',
  description: 'An error: its stable code and a message that says what to do',
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: { code: { type: 'string' }, message: { type: 'string' }, details: {} },
    },
  },
} as const;

const errorAnswer = { description: errorSchema.description, $ref: 'Error#' };

/**
 * Describes the API as an OpenAPI 3.1 document built from the routes' own schemas (@fastify/swagger
 * collects each route as it is added, so this must run before the routes), served at `GET /openapi.json`.
 * Each operation is tagged with its area (`runs`, `tasks`, ...) and says how errors look.
 */
export function openApiRoutes(app: FastifyInstance): void {
  const { version } = createRequire(import.meta.url)('../package.json') as { version: string };
  app.addSchema(errorSchema);
  // Loaded with the server, not with every command of the CLI that imports this package.
  const options: SwaggerOptions = {
    // Shared schemas keep their names under components.schemas.
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => String(json.$id ?? `def-${i}`) },
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Weft HTTP API',
        version,
        description:
          "Weft's HTTP API: definitions, runs, history, the worker protocol and operations. Requests name their namespace in the x-weft-namespace header (default `default`) and carry an API key as `Authorization: Bearer <key>`.",
      },
      components: {
        securitySchemes: { apiKey: { type: 'http', scheme: 'bearer', description: 'A Weft API key' } },
      },
      security: [{ apiKey: [] }],
    },
    transform: ({ schema, url, route }) => {
      const area = /^\/v1\/([^/]+)/.exec(url)?.[1] ?? 'server';
      const tagged = { ...(schema ?? {}), tags: [area] } as Record<string, unknown>;
      // Liveness, readiness and this document answer without a key.
      if ((route.config as { auth?: unknown } | undefined)?.auth === 'public') tagged.security = [];
      if (route.method !== 'HEAD')
        tagged.response = { '4xx': errorAnswer, '5xx': errorAnswer, ...(schema?.response ?? {}) };
      return { schema: tagged as never, url };
    },
  };
  app.register(import('@fastify/swagger'), options);
  app.register(async (api) => {
    api.get('/openapi.json', { config: { auth: 'public' } }, async () => app.swagger());
  });
}

/** The API's OpenAPI document, from an app that has `openApiRoutes` (waits for it to be ready). */
export async function openApiDocument(app: FastifyInstance): Promise<Record<string, unknown>> {
  await app.ready();
  return app.swagger() as unknown as Record<string, unknown>;
}
