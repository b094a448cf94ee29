import type { AuditEntry, PgApiKeys } from '@weft/postgres';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { NO_AUTH_PRINCIPAL } from '../auth/rules.js';
import { namespaceOf } from '../namespace.js';
import { ROW_ID_PATTERN } from './fields.js';

const auditQuery = {
  querystring: {
    type: 'object',
    additionalProperties: false,
    properties: {
      limit: { type: 'string', pattern: '^(?:[1-9][0-9]?|[1-4][0-9]{2}|500)$' },
      // A bigint row id: 19 digits could overflow the column.
      before: { type: 'string', pattern: ROW_ID_PATTERN },
    },
  },
};

function entryJson(e: AuditEntry) {
  return {
    id: e.id,
    at: e.at.toISOString(),
    actor: e.actor,
    action: e.action,
    namespace: e.namespace,
    target: e.target,
    details: e.details,
  };
}

const stores = new WeakMap<FastifyInstance, PgApiKeys>();

/**
 * Who made the request, as history records it: the key's name, with the caller's own note (a `by` field)
 * beside it, never in its place. With authentication off, the note (else `api`) as before.
 */
export function actorOf(request: FastifyRequest, note?: string): string {
  const p = request.principal;
  if (!p || p === NO_AUTH_PRINCIPAL) return note ?? 'api';
  return note && note !== p.name ? `${p.name} (for ${note})` : p.name;
}

/** `{ by }` with the calling key's name, or nothing when the server runs without keys. */
export function keyNameOf(request: FastifyRequest): { by?: string } {
  const p = request.principal;
  return !p || p === NO_AUTH_PRINCIPAL ? {} : { by: p.name };
}

/** Notes an administrative change made by a request, in the namespace it acted in unless told. */
export async function audit(
  request: FastifyRequest,
  action: string,
  target: string | null,
  details: unknown = {},
  namespace: string | null = namespaceOf(request),
): Promise<void> {
  // Routes live in plugins: their instances inherit from the app's, where the store was registered.
  let server: object | null = request.server;
  while (server && !stores.has(server as FastifyInstance)) server = Object.getPrototypeOf(server);
  await stores
    .get(server as FastifyInstance)
    ?.audit({ actor: actorOf(request), action, namespace, target, details });
}

/** `GET /v1/audit`: administrative changes (keys, limits, schedules, bulk actions, replays), newest first. */
export function auditRoutes(app: FastifyInstance, keys: PgApiKeys | undefined): void {
  if (keys) stores.set(app, keys);
  app.get<{ Querystring: { limit?: string; before?: string } }>(
    '/v1/audit',
    { schema: auditQuery, config: { auth: 'system' } },
    async (request) => {
      const limit = Number(request.query.limit ?? 50);
      const items = keys
        ? await keys.auditList({ limit, ...(request.query.before ? { before: request.query.before } : {}) })
        : [];
      return {
        items: items.map(entryJson),
        next_before: items.length === limit ? items[items.length - 1]!.id : null,
      };
    },
  );
}
