import type { KeyRole } from '@weft/postgres';

/**
 * What a route asks of its caller. Every route declares one as `config.auth`; a route without one stops
 * the server from starting.
 * - `public`: anyone (liveness and readiness, the console's files).
 * - `metrics`: the metrics token, or a key that reads every namespace; anyone when authentication is off.
 * - `read`: viewer, operator or admin, in the request's namespace.
 * - `operate`: operator or admin, in the request's namespace.
 * - `admin`: admin, in the request's namespace (limits and quotas).
 * - `work`: worker or admin, in the request's namespace (poll, lease, heartbeat, report).
 * - `connect`: any key, in the request's namespace (what a worker needs to know to connect).
 * - `system`: an admin of every namespace (keys, the audit list, the sweeper).
 */
export type AuthRule = 'public' | 'metrics' | 'read' | 'operate' | 'admin' | 'work' | 'connect' | 'system';

/** Every rule, for checks and tests. */
export const AUTH_RULES: readonly AuthRule[] = [
  'public',
  'metrics',
  'read',
  'operate',
  'admin',
  'work',
  'connect',
  'system',
];

/** The roles each rule lets in (public and metrics are checked apart). */
export const RULE_ROLES: Record<AuthRule, readonly KeyRole[]> = {
  public: ['admin', 'operator', 'viewer', 'worker'],
  metrics: ['admin', 'operator', 'viewer'],
  read: ['admin', 'operator', 'viewer'],
  operate: ['admin', 'operator'],
  admin: ['admin'],
  work: ['admin', 'worker'],
  connect: ['admin', 'operator', 'viewer', 'worker'],
  system: ['admin'],
};

/** Who is calling: the key that authenticated the request (or everyone, when authentication is off). */
export interface Principal {
  /** The key's name: what history and the audit list record as the actor. */
  readonly name: string;
  readonly role: KeyRole;
  /** The namespaces it may act in; null for every one. */
  readonly namespaces: readonly string[] | null;
  /** For a worker key, the task types it may take; null for any. */
  readonly taskTypes: readonly string[] | null;
}

/** The principal of every request when authentication is off. */
export const NO_AUTH_PRINCIPAL: Principal = { name: 'api', role: 'admin', namespaces: null, taskTypes: null };

/** True when the rule needs a namespace the key may act in. */
export function namespaced(rule: AuthRule): boolean {
  return rule !== 'public' && rule !== 'metrics' && rule !== 'system';
}

/** The namespace a request acts in when it names none: the key's only (first) one, else `default`. */
export function homeNamespace(principal: Principal | null): string {
  return principal?.namespaces?.[0] ?? 'default';
}

/** True when the principal may act in this namespace. */
export function mayActIn(principal: Principal, namespace: string): boolean {
  return principal.namespaces === null || principal.namespaces.includes(namespace);
}
