/**
 * Seeded random values for the HTTP fuzz test: valid ones drawn from a route's JSON schema, and hostile
 * ones (numbers past every column, U+0000 and control characters, very long text, deep JSON, bad UUIDs).
 */

/** A seeded pseudo-random source (mulberry32): the same seed gives the same requests. */
export class Random {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0;
  }
  /** A float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }
}

/** What the generator may use besides random text: ids and names that exist on the server. */
export interface Known {
  readonly strings: string[];
}

/** JSON values a hostile field gets instead of its own, by shape name. */
export const HOSTILE_NUMBERS = [
  2 ** 31,
  2 ** 31 - 1,
  2 ** 32,
  2 ** 53,
  2 ** 53 + 2,
  2 ** 63,
  1e308,
  -1,
  -(2 ** 31) - 1,
  -1e308,
  0,
  -0,
  0.5,
  1.0000001,
  1e-7,
  4.9e-324,
];

const CONTROL = Array.from({ length: 32 }, (_, i) => String.fromCharCode(i)).join('') + '\u007f\u0085\u2028';

/** Text meant to break something: NUL, control characters, half surrogates, odd Unicode, injection tries. */
export function hostileString(r: Random): { shape: string; value: string } {
  switch (r.int(0, 9)) {
    case 0:
      return { shape: 'nul', value: `a\u0000b` };
    case 1:
      return { shape: 'control', value: Array.from({ length: 8 }, () => r.pick([...CONTROL])).join('') };
    case 2:
      return { shape: 'surrogate', value: r.pick(['\ud800', 'x\udfff', '\udbff\ud800']) };
    case 3:
      return { shape: 'long-string', value: 'x'.repeat(r.pick([257, 1025, 10_001, 200_000])) };
    case 4:
      return {
        shape: 'unicode',
        value: r.pick(['𝕨𝕖𝕗𝕥', 'é'.normalize('NFD'), '\u202eabc', '\ufeff', '日本語']),
      };
    case 5:
      return {
        shape: 'injection',
        value: r.pick(["'; DROP TABLE weft.runs; --", '$1', '{{x}}', '${x}', '../../etc']),
      };
    case 6:
      return {
        shape: 'bad-uuid',
        value: r.pick([
          '00000000-0000-0000-0000-00000000000g',
          '-'.repeat(36),
          'x'.repeat(36),
          '0'.repeat(36),
        ]),
      };
    case 7:
      return {
        shape: 'numeric-string',
        value: r.pick(['1e308', '-1', '2147483648', '9'.repeat(30), 'NaN', '0x10', ' 1']),
      };
    case 8:
      return { shape: 'empty', value: '' };
    default:
      return { shape: 'whitespace', value: r.pick([' ', '\t', '\n', '  x  ']) };
  }
}

/** A random JSON value of at most `depth` levels. */
export function randomJson(r: Random, depth = 3): unknown {
  switch (r.int(0, depth > 0 ? 6 : 4)) {
    case 0:
      return null;
    case 1:
      return r.chance(0.5);
    case 2:
      return r.chance(0.5) ? r.pick(HOSTILE_NUMBERS) : r.int(-5, 100);
    case 3:
      return hostileString(r).value;
    case 4:
      return r.pick(['a', 'ok', 'order-1', '']);
    case 5:
      return Array.from({ length: r.int(0, 3) }, () => randomJson(r, depth - 1));
    default:
      return Object.fromEntries(
        Array.from({ length: r.int(0, 3) }, (_, i) => [`k${i}`, randomJson(r, depth - 1)]),
      );
  }
}

type Schema = Record<string, any>;

/** A value that passes `schema` (as far as this generator reads schemas), using known ids and names. */
export function validFor(r: Random, schema: Schema | undefined, known: Known, depth = 0): unknown {
  if (!schema || Object.keys(schema).length === 0) return depth > 4 ? null : randomJson(r, 2);
  if (schema.enum) return r.pick(schema.enum);
  const type = Array.isArray(schema.type)
    ? r.pick(schema.type.filter((t: string) => t !== 'null'))
    : schema.type;
  switch (type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      const required: string[] = schema.required ?? [];
      for (const [key, inner] of Object.entries(schema.properties ?? {})) {
        if (required.includes(key) || r.chance(0.5))
          out[key] = validFor(r, inner as Schema, known, depth + 1);
      }
      return out;
    }
    case 'array': {
      const n = Math.max(schema.minItems ?? 0, r.int(0, Math.min(3, schema.maxItems ?? 3)));
      return Array.from({ length: n }, () => validFor(r, schema.items, known, depth + 1));
    }
    case 'integer':
    case 'number': {
      const min = schema.minimum ?? 0;
      return Math.min(schema.maximum ?? min + 3, min + r.int(0, 3));
    }
    case 'boolean':
      return r.chance(0.5);
    case 'string':
      return validString(r, schema, known);
    default:
      return randomJson(r, 1);
  }
}

function validString(r: Random, schema: Schema, known: Known): string {
  const pattern: string | undefined = schema.pattern;
  if (pattern?.includes('0-9a-fA-F-]{36}') || pattern?.includes('{1,36}'))
    return r.pick(known.strings.filter((s) => s.length === 36).concat(crypto.randomUUID()));
  if (pattern?.includes('latest')) return r.pick(['latest', '1', '2']);
  if (pattern?.startsWith('^[0-9]') || pattern?.startsWith('^[1-9]')) return String(r.int(1, 5));
  const text = r.chance(0.5) ? r.pick(known.strings) : `v${r.int(0, 999)}`;
  return text.slice(0, schema.maxLength ?? text.length).padEnd(schema.minLength ?? 0, 'x');
}
