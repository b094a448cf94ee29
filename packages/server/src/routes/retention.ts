import { WeftError } from '@weft/core';
import type { Engine, RetentionPolicy, RunArchive } from '@weft/engine';
import type { FastifyInstance } from 'fastify';
import { namespaceOf } from '../namespace.js';
import { audit } from './audit.js';

const definitionField = { type: 'string', minLength: 1, maxLength: 200 };

function policyJson(p: RetentionPolicy) {
  return {
    namespace: p.namespace,
    definition: p.definition,
    keep_ms: p.keepMs,
    archive: p.archive,
    updated_at: p.updatedAt.toISOString(),
  };
}

/** An archived run as `GET /v1/runs/{id}` answers it once its rows are gone. */
export function archivedRunJson(doc: RunArchive) {
  return { ...doc.run, archived: true, archived_at: doc.archivedAt, tasks: doc.tasks, history: doc.history };
}

/**
 * Retention of the request's namespace: its policy and per-definition overrides (`GET`, `PUT`, `DELETE
 * /v1/retention`), and a purge by hand (`POST /v1/runs/purge`, with `dry_run` to count).
 */
export function retentionRoutes(app: FastifyInstance, engine: Engine): void {
  app.get('/v1/retention', { config: { auth: 'read' } }, async (request) => ({
    items: (await engine.retention.policies(namespaceOf(request))).map(policyJson),
  }));

  app.put<{ Body: { definition?: string; keep: string; archive?: boolean } }>(
    '/v1/retention',
    {
      config: { auth: 'admin' },
      schema: {
        body: {
          type: 'object',
          required: ['keep'],
          additionalProperties: false,
          properties: {
            definition: definitionField,
            keep: {
              type: 'string',
              minLength: 1,
              maxLength: 40,
              description: 'A duration such as 30d or 12h',
            },
            archive: { type: 'boolean' },
          },
        },
      },
    },
    async (request) => {
      const policy = await engine.retention.setPolicy(namespaceOf(request), request.body);
      await audit(request, 'retention.set', policy.definition ?? '*', request.body);
      return policyJson(policy);
    },
  );

  app.delete<{ Querystring: { definition?: string } }>(
    '/v1/retention',
    {
      config: { auth: 'admin' },
      schema: {
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: { definition: definitionField },
        },
      },
    },
    async (request) => {
      const definition = request.query.definition ?? null;
      const deleted = await engine.retention.clearPolicy(namespaceOf(request), definition);
      if (deleted) await audit(request, 'retention.clear', definition ?? '*');
      return { deleted };
    },
  );

  app.post<{ Body: { before: string; definition?: string; dry_run?: boolean } }>(
    '/v1/runs/purge',
    {
      config: { auth: 'admin' },
      schema: {
        body: {
          type: 'object',
          required: ['before'],
          additionalProperties: false,
          properties: {
            before: {
              type: 'string',
              minLength: 1,
              maxLength: 64,
              description: 'Runs finished before this time',
            },
            definition: definitionField,
            dry_run: { type: 'boolean' },
          },
        },
      },
    },
    async (request) => {
      const before = new Date(request.body.before);
      if (Number.isNaN(before.getTime()))
        throw new WeftError('bad_request', 'before must be a time such as 2026-01-31T12:00:00Z', 400);
      const dryRun = request.body.dry_run ?? false;
      const outcome = await engine.retention.purge({
        namespace: namespaceOf(request),
        before,
        dryRun,
        ...(request.body.definition !== undefined ? { definition: request.body.definition } : {}),
      });
      if (!dryRun) await audit(request, 'runs.purge', request.body.definition ?? '*', request.body);
      // The blobs purged runs referenced, waiting for the blob deleter (every namespace's: blobs are shared).
      const blobs = await engine.blobDeleter.backlog();
      return {
        dry_run: dryRun,
        ...outcome,
        ...(blobs ? { blobs_waiting: blobs.listed, blobs_failing: blobs.failing } : {}),
      };
    },
  );
}
