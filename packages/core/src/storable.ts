/**
 * What PostgreSQL can store of a JSON value. Its `text` and `jsonb` types refuse U+0000, its `jsonb` refuses
 * a UTF-16 surrogate that is not part of a pair, and its JSON parser gives up on very deep nesting. Weft
 * checks values for these where they enter, so that none reaches the database as a failed statement.
 */

/** Deepest nesting of arrays and objects that a stored value may have. */
export const MAX_JSON_DEPTH = 512;

/** Why a value cannot be stored, and where in it: `input.items[2].name`. */
export interface StorageProblem {
  readonly path: string;
  readonly message: string;
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Why `text` cannot be stored in a PostgreSQL text or jsonb value, or null when it can. */
export function textProblem(text: string): string | null {
  if (text.includes('\u0000'))
    return 'holds U+0000 (a NUL character), which PostgreSQL cannot store: remove it';
  if (LONE_SURROGATE.test(text))
    return 'holds a lone UTF-16 surrogate (half of a character), which is not valid Unicode: send whole characters';
  return null;
}

/**
 * The first part of `value` (a parsed JSON value) that PostgreSQL cannot store, or null when all of it can.
 * `root` names the value in the path (`body.input`). The walk keeps its own stack: a value nested deeper
 * than the JavaScript call stack allows is reported, not a crash.
 */
export function storageProblem(value: unknown, root: string): StorageProblem | null {
  const stack: { value: unknown; path: string; depth: number }[] = [{ value, path: root, depth: 0 }];
  while (stack.length > 0) {
    const at = stack.pop()!;
    if (typeof at.value === 'string') {
      const why = textProblem(at.value);
      if (why) return { path: at.path, message: why };
      continue;
    }
    if (at.value === null || typeof at.value !== 'object') continue;
    if (at.depth >= MAX_JSON_DEPTH)
      return { path: at.path, message: `is nested deeper than ${MAX_JSON_DEPTH} levels: flatten it` };
    if (Array.isArray(at.value)) {
      for (let i = at.value.length - 1; i >= 0; i--)
        stack.push({ value: at.value[i], path: `${at.path}[${i}]`, depth: at.depth + 1 });
      continue;
    }
    const entries = Object.entries(at.value as Record<string, unknown>);
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, inner] = entries[i]!;
      const why = textProblem(key);
      if (why) return { path: at.path, message: `has a key that ${why}` };
      stack.push({ value: inner, path: at.path + keySegment(key), depth: at.depth + 1 });
    }
  }
  return null;
}

/** `.name` for a plain key, `["odd key"]` for any other. */
function keySegment(key: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
}
