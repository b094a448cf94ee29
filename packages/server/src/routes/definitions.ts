import { WeftError } from '@weft/core';
import type { Engine } from '@weft/engine';
import type { FastifyInstance } from 'fastify';
import { namespaceOf } from '../namespace.js';
import { audit } from './audit.js';

/** Deploying and reading definitions. */
export function definitionRoutes(app: FastifyInstance, engine: Engine): void {
  app.post('/v1/definitions', { config: { auth: 'operate' } }, async (request, reply) => {
    const body = request.body;
    const source = typeof body === 'string' ? body : (body as { source?: unknown } | null)?.source;
    if (typeof source !== 'string' || source.trim() === '') {
      throw new WeftError(
        'bad_request',
        'send the definition as YAML (content-type application/yaml) or as JSON {"source": "<yaml>"}',
        400,
      );
    }
    const { record, created } = await engine.definitions.deploy(namespaceOf(request), source);
    if (created)
      await audit(request, 'definition.deploy', `${record.name}@${record.version}`, { hash: record.hash });
    return reply.status(created ? 201 : 200).send({
      name: record.name,
      version: record.version,
      created,
      hash: record.hash,
      created_at: record.createdAt.toISOString(),
    });
  });

  app.get('/v1/definitions', { config: { auth: 'read' } }, async (request) => {
    const list = await engine.context.store.listDefinitions(namespaceOf(request));
    return {
      items: list.map((d) => ({
        name: d.name,
        latest_version: d.latestVersion,
        versions: d.versions,
        updated_at: d.updatedAt.toISOString(),
      })),
    };
  });

  app.get<{ Params: { name: string } }>(
    '/v1/definitions/:name',
    { config: { auth: 'read' } },
    async (request) => {
      const versions = await engine.context.store.listDefinitionVersions(
        namespaceOf(request),
        request.params.name,
      );
      if (versions.length === 0) {
        throw new WeftError(
          'definition_not_found',
          `definition "${request.params.name}" is not deployed`,
          404,
        );
      }
      return {
        name: request.params.name,
        versions: versions.map((v) => ({
          version: v.version,
          hash: v.hash,
          created_at: v.createdAt.toISOString(),
        })),
      };
    },
  );

  app.get<{ Params: { name: string; version: string } }>(
    '/v1/definitions/:name/versions/:version',
    {
      config: { auth: 'read' },
      schema: {
        params: {
          type: 'object',
          properties: {
            name: { type: 'string' },
            version: { type: 'string', pattern: '^(latest|[0-9]{1,9})$' },
          },
        },
      },
    },
    async (request) => {
      const version = request.params.version === 'latest' ? undefined : Number(request.params.version);
      if (version !== undefined && !Number.isInteger(version)) {
        throw new WeftError(
          'bad_request',
          `version must be a number or "latest", not ${JSON.stringify(request.params.version)}`,
          400,
        );
      }
      const { record } = await engine.definitions.resolve(namespaceOf(request), request.params.name, version);
      return {
        name: record.name,
        version: record.version,
        hash: record.hash,
        created_at: record.createdAt.toISOString(),
        source: record.source,
        definition: record.definition,
      };
    },
  );
}
