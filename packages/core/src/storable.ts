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

/** A place in the walk: its value and how it was reached, so that its path is built only if it is reported. */
interface Place {
  readonly value: unknown;
  readonly parent: Place | null;
  /** The key (object) or index (array) under the parent; unused at the root. */
  readonly step: string | number;
  readonly depth: number;
}

/**
 * The first part of `value` (a parsed JSON value) that PostgreSQL cannot store, or null when all of it can.
 * `root` names the value in the path (`body.input`). The walk keeps its own stack: a value nested deeper
 * than the JavaScript call stack allows is reported, not a crash. Every request body passes here, so paths
 * are built only for the part reported, not for each value walked.
 */
export function storageProblem(value: unknown, root: string): StorageProblem | null {
  const stack: Place[] = [{ value, parent: null, step: 0, depth: 0 }];
  while (stack.length > 0) {
    const at = stack.pop()!;
    const v = at.value;
    if (typeof v === 'string') {
      const why = textProblem(v);
      if (why) return { path: pathOf(at, root), message: why };
      continue;
    }
    if (v === null || typeof v !== 'object') continue;
    if (at.depth >= MAX_JSON_DEPTH)
      return {
        path: pathOf(at, root),
        message: `is nested deeper than ${MAX_JSON_DEPTH} levels: flatten it`,
      };
    const depth = at.depth + 1;
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i], parent: at, step: i, depth });
      continue;
    }
    const keys = Object.keys(v);
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i]!;
      const why = textProblem(key);
      if (why) return { path: pathOf(at, root), message: `has a key that ${why}` };
      // A JSON key "__proto__" is an own property, which indexing would not reach.
      const inner =
        key === '__proto__'
          ? Object.getOwnPropertyDescriptor(v, key)?.value
          : (v as Record<string, unknown>)[key];
      stack.push({ value: inner, parent: at, step: key, depth });
    }
  }
  return null;
}

/** The path of a place: `root`, then `.key` or `[index]` for each step down to it. */
function pathOf(place: Place, root: string): string {
  const steps: string[] = [];
  for (let at: Place | null = place; at?.parent; at = at.parent)
    steps.push(typeof at.step === 'number' ? `[${at.step}]` : keySegment(at.step));
  return root + steps.reverse().join('');
}

/** `.name` for a plain key, `["odd key"]` for any other. */
function keySegment(key: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
}
