import type postgres from 'postgres';

/** A connection or a transaction: every operation takes one, so it can run alone or inside a transaction. */
export type Db = postgres.ISql;

/** JSON text for a `::text[]` parameter that SQL casts to jsonb; null stays SQL NULL. */
export function jsonText(value: unknown): string | null {
  return value === null || value === undefined ? null : JSON.stringify(value);
}

/** Booleans as text for a `::text[]::bool[]` parameter (the driver does not type boolean arrays). */
export function bools(values: readonly boolean[]): string[] {
  return values.map((v) => (v ? 't' : 'f'));
}
