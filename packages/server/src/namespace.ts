import { WeftError } from '@weft/core';
import type { FastifyRequest } from 'fastify';
import { homeNamespace } from './auth/rules.js';

const NAMESPACE = /^[a-z0-9][a-z0-9_-]{0,62}$/;

/**
 * The namespace a request acts in: the `x-weft-namespace` header, else the key's own namespace (its first
 * when it has several), else `default`. Authentication has checked that the key may act in it.
 */
export function namespaceOf(request: FastifyRequest): string {
  const given = request.headers['x-weft-namespace'];
  const value = (Array.isArray(given) ? given[0] : given) ?? homeNamespace(request.principal);
  if (!NAMESPACE.test(value)) {
    throw new WeftError(
      'bad_namespace',
      `namespace ${JSON.stringify(value)} is not valid: use lowercase letters, digits, "_" and "-"`,
      400,
    );
  }
  return value;
}
