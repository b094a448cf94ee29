/**
 * Freezes a value and everything it holds, so that no one downstream can change a definition once it is
 * read (a node is a readonly record in its type, and a frozen object at run time). Returns the value.
 */
export function deepFreeze<T>(value: T): T {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return value;
  Object.freeze(value);
  for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  return value;
}
