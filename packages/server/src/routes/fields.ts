/**
 * Field schemas shared by routes, sized to the columns they end in: an attempt or a version is an
 * `int` in PostgreSQL, so a larger number is refused with a 400 where it enters rather than failing its
 * statement.
 */

/** The largest PostgreSQL `int` (int4). */
export const INT4_MAX = 2_147_483_647;

/** An attempt number (1 and up). */
export const attemptField = { type: 'integer', minimum: 1, maximum: INT4_MAX } as const;

/** A definition version (1 and up). */
export const versionField = { type: 'integer', minimum: 1, maximum: INT4_MAX } as const;

/** A whole number of at most `digits` digits as it comes in a query string or path (9 digits fit an int). */
export function digitsField(digits = 9) {
  return { type: 'string', pattern: `^[0-9]{1,${digits}}$` } as const;
}

/** A UUID in its usual 8-4-4-4-12 form (what a `uuid` column takes). */
export const uuidField = {
  type: 'string',
  pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$',
} as const;

/** A `bigint` row id as text: 18 digits at most, so it always fits (the largest bigint has 19). */
export const ROW_ID_PATTERN = '^[0-9]{1,18}$';
