import { parseDuration, WeftError } from '@weft/core';
import { type ApiKeyRecord, KEY_ROLES, type KeyRole, type PgApiKeys } from '@weft/postgres';
import type { FastifyInstance } from 'fastify';
import { issueKey } from '../auth/issue.js';
import { actorOf } from './audit.js';

const NAME = '^[A-Za-z0-9][A-Za-z0-9._@-]{0,99}$';
const createSchema = {
  body: {
    type: 'object',
    required: ['name', 'role'],
    additionalProperties: false,
    properties: {
      name: { type: 'string', pattern: NAME },
      role: { type: 'string', enum: KEY_ROLES },
      namespaces: {
        type: ['array', 'null'],
        minItems: 1,
        maxItems: 100,
        items: { type: 'string', pattern: '^[a-z0-9][a-z0-9_-]{0,62}$' },
      },
      task_types: {
        type: ['array', 'null'],
        minItems: 1,
        maxItems: 100,
        items: { type: 'string', minLength: 1, maxLength: 128 },
      },
      expires_at: { type: 'string', minLength: 1, maxLength: 64 },
      expires_in: { type: 'string', minLength: 1, maxLength: 32 },
    },
  },
};
const nameParams = {
  params: { type: 'object', required: ['name'], properties: { name: { type: 'string', pattern: NAME } } },
};

interface CreateBody {
  name: string;
  role: KeyRole;
  namespaces?: string[] | null;
  task_types?: string[] | null;
  expires_at?: string;
  expires_in?: string;
}

/** A key as the API shows it: never its secret, nor its hash. */
export function keyJson(k: ApiKeyRecord) {
  return {
    name: k.name,
    prefix: k.prefix,
    role: k.role,
    namespaces: k.namespaces,
    task_types: k.taskTypes,
    created_by: k.createdBy,
    created_at: k.createdAt.toISOString(),
    expires_at: k.expiresAt?.toISOString() ?? null,
    revoked_at: k.revokedAt?.toISOString() ?? null,
    last_used_at: k.lastUsedAt?.toISOString() ?? null,
  };
}

/** API keys: make one (shown once), list them, revoke one. Admins of every namespace only. */
export function keyRoutes(app: FastifyInstance, store: PgApiKeys | undefined): void {
  const need = (): PgApiKeys => {
    if (store) return store;
    throw new WeftError(
      'no_key_store',
      'this server keeps no API keys: serve it on PostgreSQL to use keys',
      409,
    );
  };
  app.post<{ Body: CreateBody }>(
    '/v1/keys',
    { schema: createSchema, config: { auth: 'system' } },
    async (request, reply) => {
      const b = request.body;
      const keys = need();
      const { record, key } = await issueKey(
        keys,
        {
          name: b.name,
          role: b.role,
          namespaces: b.namespaces ?? null,
          taskTypes: b.task_types ?? null,
          expiresAt: expiry(b),
        },
        actorOf(request),
      );
      await keys.audit({
        actor: actorOf(request),
        action: 'key.create',
        namespace: null,
        target: record.name,
        details: { role: record.role, namespaces: record.namespaces, task_types: record.taskTypes },
      });
      return reply.status(201).send({ ...keyJson(record), key });
    },
  );

  app.get('/v1/keys', { config: { auth: 'system' } }, async () => ({
    items: (await need().list()).map(keyJson),
  }));

  app.post<{ Params: { name: string } }>(
    '/v1/keys/:name/revoke',
    { schema: nameParams, config: { auth: 'system' } },
    async (request) => {
      const keys = need();
      const record = await keys.revoke(request.params.name);
      if (!record)
        throw new WeftError(
          'key_not_found',
          `there is no key named "${request.params.name}": see GET /v1/keys`,
          404,
        );
      await keys.audit({
        actor: actorOf(request),
        action: 'key.revoke',
        namespace: null,
        target: record.name,
        details: {},
      });
      return keyJson(record);
    },
  );
}

function expiry(b: CreateBody): Date | null {
  if (b.expires_at !== undefined && b.expires_in !== undefined)
    throw new WeftError('bad_request', 'give expires_at or expires_in, not both', 400);
  if (b.expires_in !== undefined) {
    const parsed = parseDuration(b.expires_in);
    if (!parsed.ok) throw new WeftError('bad_request', `expires_in: ${parsed.error}`, 400);
    return new Date(Date.now() + parsed.value);
  }
  if (b.expires_at === undefined) return null;
  const at = new Date(b.expires_at);
  if (Number.isNaN(at.getTime()))
    throw new WeftError(
      'bad_request',
      `expires_at must be a time such as 2027-01-31T12:00:00Z, not ${JSON.stringify(b.expires_at)}`,
      400,
    );
  return at;
}
