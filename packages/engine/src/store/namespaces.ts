/** A poll for this namespace takes tasks of every namespace (the server's own system-task runner). */
export const ANY_NAMESPACE = '*';

/**
 * The namespace to check tasks against in a store operation: none for `ANY_NAMESPACE`, whose reports and
 * heartbeats (the server's own runner) may name tasks of any namespace.
 */
export function namespaceScope(namespace: string): string | undefined {
  return namespace === ANY_NAMESPACE ? undefined : namespace;
}
