import { err, ok, type Result } from './result.js';

/** A search attribute's value: text, a number or a boolean. */
export type AttributeValue = string | number | boolean;

/** Search attributes of a run: key-value tags, indexed, that lists filter on (`customer = 42`). */
export type RunAttributes = Readonly<Record<string, AttributeValue>>;

/** Most attributes one start or one transform sets. */
export const MAX_ATTRIBUTES = 32;
/** Longest text value. */
export const MAX_ATTRIBUTE_TEXT = 256;
/** An attribute's name: a letter or underscore, then letters, digits, `_`, `.` or `-`; at most 64. */
export const ATTRIBUTE_KEY = /^[A-Za-z_][A-Za-z0-9_.-]{0,63}$/;

/**
 * Checks search attributes where they enter (a start's `attributes`, a transform's result): an object of at
 * most 32 names, each a name as `ATTRIBUTE_KEY` says, each value text (at most 256 characters), a finite
 * number or a boolean. The error says which attribute is wrong and how to write it.
 */
export function checkAttributes(value: unknown): Result<RunAttributes, string> {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return err('attributes must be an object of names to text, numbers or booleans');
  const entries = Object.entries(value);
  if (entries.length > MAX_ATTRIBUTES) return err(`at most ${MAX_ATTRIBUTES} attributes may be set at once`);
  for (const [key, v] of entries) {
    if (!ATTRIBUTE_KEY.test(key))
      return err(
        `attribute name ${JSON.stringify(key)} must start with a letter or _ and hold only letters, digits, _, . or - (at most 64)`,
      );
    if (
      typeof v === 'string'
        ? v.length > MAX_ATTRIBUTE_TEXT
        : typeof v === 'number'
          ? !Number.isFinite(v)
          : typeof v !== 'boolean'
    )
      return err(
        `attribute ${key} must be text of at most ${MAX_ATTRIBUTE_TEXT} characters, a finite number or a boolean`,
      );
  }
  return ok(value as RunAttributes);
}

/** The text an attribute's value is indexed and matched by: `42` matches both 42 and "42". */
export function attributeText(value: AttributeValue): string {
  return String(value);
}
