import type postgres from 'postgres';

/**
 * A connection or a transaction: every operation takes one, so it can run alone or inside a transaction.
 *
 * Every operation sends its statements with `.execute()` at the moment it is called. The driver otherwise
 * sends a query when it is first awaited, one microtask later, and a COMMIT pipelined behind a write set
 * could overtake the writes. Within a write set, an operation sends all its statements before awaiting any.
 */
export type Db = postgres.ISql;

/** JSON text for a `::text[]` parameter that SQL casts to jsonb; null stays SQL NULL. */
export function jsonText(value: unknown): string | null {
  return value === null || value === undefined ? null : JSON.stringify(value);
}

/** Booleans as text for a `::text[]::bool[]` parameter (the driver does not type boolean arrays). */
export function bools(values: readonly boolean[]): string[] {
  return values.map((v) => (v ? 't' : 'f'));
}
