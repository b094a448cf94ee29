import { WeftError } from '@weft/core';
import type { ApiKeyRecord, PgApiKeys } from '@weft/postgres';
import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify';
import { keyMatches, keyPrefix, sameSecret } from './key-format.js';
import {
  type AuthRule,
  homeNamespace,
  mayActIn,
  NO_AUTH_PRINCIPAL,
  namespaced,
  type Principal,
  RULE_ROLES,
} from './rules.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Who may call the route (see AuthRule). */
    auth?: AuthRule;
  }
  interface FastifyRequest {
    /** The caller, once authenticated; null before (and on routes that need no key). */
    principal: Principal | null;
  }
}

/** How a server authenticates requests. */
export type AuthSettings =
  | {
      /** Every request but the public ones needs an API key. */
      readonly mode: 'keys';
      readonly keys: PgApiKeys;
      /** A bearer token that may read /metrics without an API key. */
      readonly metricsToken?: string;
    }
  | {
      /** No request needs a key (a server on loopback only); keys may still be made for later. */
      readonly mode: 'off';
      readonly keys?: PgApiKeys;
    };

/** One route and the rule it declares, as the server's route table has them. */
export interface RouteRule {
  readonly method: string;
  readonly url: string;
  readonly rule: AuthRule | undefined;
}

/** `last_used_at` is written at most this often per key and server. */
const TOUCH_EVERY_MS = 60_000;

const tables = new WeakMap<FastifyInstance, RouteOptions[]>();

/** Every route of the app with its rule (read once the app is ready). */
export function routeRules(app: FastifyInstance): RouteRule[] {
  return (tables.get(app) ?? []).flatMap((r) =>
    (Array.isArray(r.method) ? r.method : [r.method]).map((method) => ({
      method: String(method),
      url: r.url,
      rule: r.config?.auth,
    })),
  );
}

/**
 * Checks every request against its route's rule: who it is (401 when the key is missing, unknown, revoked
 * or expired), whether its role may (403 naming what it lacks) and whether it may act in the namespace it
 * names (404, as if there were nothing there). A route declared without a rule stops the server from
 * starting. `isPublicFile` tells the console's static files, which need no key.
 */
export function installAuth(
  app: FastifyInstance,
  settings: AuthSettings,
  isPublicFile: (route: RouteOptions) => boolean,
): void {
  const routes: RouteOptions[] = [];
  tables.set(app, routes);
  app.decorateRequest('principal', null);
  app.addHook('onRoute', (route) => {
    if (route.config?.auth === undefined && isPublicFile(route))
      route.config = { ...route.config, auth: 'public' };
    routes.push(route);
  });
  app.addHook('onReady', async () => {
    const missing = routeRules(app).filter((r) => r.rule === undefined);
    if (missing.length > 0)
      throw new Error(
        `routes without an auth rule (config.auth): ${missing.map((r) => `${r.method} ${r.url}`).join(', ')}`,
      );
  });
  const touched = new Map<string, number>();
  // Callback style: a request that needs no key lookup (public routes, a server without keys) passes
  // without a promise or a microtask turn; only a key lookup waits, and its promise goes back to Fastify.
  app.addHook('onRequest', (request, _reply, done) => {
    if (request.is404) return done();
    const rule = request.routeOptions.config.auth;
    if (rule === undefined || rule === 'public') return done();
    if (settings.mode === 'off') {
      request.principal = NO_AUTH_PRINCIPAL;
    } else if (
      rule === 'metrics' &&
      settings.metricsToken &&
      sameSecret(bearer(request) ?? '', settings.metricsToken)
    ) {
      return done();
    } else {
      return withKey(request, rule, settings.keys, touched);
    }
    authorize(request, rule, request.principal);
    done();
  });
  app.addHook('preHandler', (request, _reply, done) => {
    const p = request.principal;
    if (request.routeOptions.config.auth !== 'work' || !p?.taskTypes) return done();
    const body = request.body as { task_types?: string[]; next?: { task_types?: string[] } } | null;
    const asked = [...(body?.task_types ?? []), ...(body?.next?.task_types ?? [])];
    const outside = asked.filter((t) => !p.taskTypes!.includes(t));
    if (outside.length > 0)
      throw new WeftError(
        'forbidden',
        `the key "${p.name}" may not take tasks of type ${outside.join(', ')}: it may take ${p.taskTypes.join(', ')}`,
        403,
      );
    done();
  });
}

/** Authenticates the request's key, notes it as used (at most every TOUCH_EVERY_MS) and authorizes it. */
async function withKey(
  request: FastifyRequest,
  rule: AuthRule,
  keys: PgApiKeys,
  touched: Map<string, number>,
): Promise<void> {
  const key = await authenticate(keys, bearer(request));
  request.principal = principalOf(key);
  const last = Math.max(touched.get(key.prefix) ?? 0, key.lastUsedAt?.getTime() ?? 0);
  if (Date.now() - last >= TOUCH_EVERY_MS) {
    touched.set(key.prefix, Date.now());
    keys.touch(key.prefix).catch((error) => request.log.warn({ err: error }, 'could not note a key as used'));
  }
  authorize(request, rule, request.principal);
}

/** The key named by the request's bearer token; 401 saying what is wrong when there is none that works. */
async function authenticate(keys: PgApiKeys, given: string | null): Promise<ApiKeyRecord> {
  if (given === null)
    throw new WeftError(
      'key_missing',
      'this server needs an API key: send it as "Authorization: Bearer <key>"',
      401,
    );
  const prefix = keyPrefix(given);
  const key = prefix ? await keys.find(prefix) : null;
  if (!key || !keyMatches(given, key.hash))
    throw new WeftError(
      'key_unknown',
      'the API key is not one this server issued: check it was copied whole',
      401,
    );
  if (key.revokedAt)
    throw new WeftError(
      'key_revoked',
      `the API key "${key.name}" was revoked: ask an admin for a new one`,
      401,
    );
  if (key.expiresAt && key.expiresAt.getTime() <= Date.now())
    throw new WeftError(
      'key_expired',
      `the API key "${key.name}" expired at ${key.expiresAt.toISOString()}: ask an admin for a new one`,
      401,
    );
  return key;
}

function principalOf(key: ApiKeyRecord): Principal {
  return {
    name: key.name,
    role: key.role,
    namespaces: key.namespaces,
    taskTypes: key.role === 'worker' ? key.taskTypes : null,
  };
}

/** 403 when the role may not use the route; 404 when the key may not act in the namespace named. */
function authorize(request: FastifyRequest, rule: AuthRule, p: Principal): void {
  if (!RULE_ROLES[rule].includes(p.role))
    throw new WeftError(
      'forbidden',
      `the key "${p.name}" has the ${p.role} role; ${request.method} ${request.routeOptions.url} needs ${RULE_ROLES[rule].join(' or ')}`,
      403,
    );
  if ((rule === 'system' || rule === 'metrics') && p.namespaces !== null)
    throw new WeftError(
      'forbidden',
      `the key "${p.name}" is limited to some namespaces; ${request.method} ${request.routeOptions.url} needs a key for every namespace`,
      403,
    );
  if (!namespaced(rule)) return;
  const given = request.headers['x-weft-namespace'];
  const namespace = (Array.isArray(given) ? given[0] : given) ?? homeNamespace(p);
  if (mayActIn(p, namespace)) return;
  const id = (request.params as { id?: string } | undefined)?.id;
  if (request.routeOptions.url?.startsWith('/v1/runs/:id') && id !== undefined)
    throw new WeftError('run_not_found', `there is no run ${id}`, 404);
  throw new WeftError(
    'namespace_not_found',
    `there is no namespace ${JSON.stringify(namespace)} for the key "${p.name}": it may act in ${p.namespaces!.join(', ')}`,
    404,
  );
}

/** The bearer token of the request, or null. */
function bearer(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (!header) return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1] ?? header.trim();
}
