import { parseDuration } from '../duration.js';
import type { Json } from '../json.js';
import { describeLocated, type Located, type LocatedEntry, toJson } from './located.js';
import { type DefinitionProblem, suggest } from './problems.js';

/**
 * Reads fields out of one YAML map, checking each one's type and reporting problems with the line and
 * path. Unknown fields are reported once `done()` is called, with a suggestion when one is close.
 */
export class MapReader {
  private readonly used = new Set<string>();
  private readonly byKey: Map<string, LocatedEntry>;

  constructor(
    readonly source: Extract<Located, { kind: 'map' }>,
    readonly path: string,
    private readonly problems: DefinitionProblem[],
    readonly node?: string,
  ) {
    this.byKey = new Map(source.entries.map((e) => [e.key, e]));
  }

  /** Records a problem at `line` (by default the map's own line). */
  problem(message: string, line = this.source.line, field?: string): void {
    const path = field ? (this.path ? `${this.path}.${field}` : field) : this.path;
    this.problems.push({
      line,
      path,
      message: path ? `${path}: ${message}` : message,
      ...(this.node ? { node: this.node } : {}),
    });
  }

  has(key: string): boolean {
    return this.byKey.has(key);
  }

  entry(key: string): LocatedEntry | undefined {
    this.used.add(key);
    return this.byKey.get(key);
  }

  /** Line of a field, or of the map when the field is absent. */
  lineOf(key: string): number {
    return this.byKey.get(key)?.line ?? this.source.line;
  }

  string(
    key: string,
    opts: { required?: boolean; pattern?: RegExp; patternHint?: string } = {},
  ): string | undefined {
    const e = this.entry(key);
    if (!e || (e.value.kind === 'scalar' && e.value.value === null)) {
      if (opts.required) this.problem(`is required`, e?.line ?? this.source.line, key);
      return undefined;
    }
    if (e.value.kind !== 'scalar' || typeof e.value.value !== 'string') {
      this.problem(`must be text, not ${describeLocated(e.value)}`, e.line, key);
      return undefined;
    }
    if (opts.pattern && !opts.pattern.test(e.value.value)) {
      this.problem(
        `${JSON.stringify(e.value.value)} ${opts.patternHint ?? 'has the wrong form'}`,
        e.line,
        key,
      );
      return undefined;
    }
    return e.value.value;
  }

  integer(key: string, opts: { min?: number; max?: number } = {}): number | undefined {
    const e = this.entry(key);
    if (!e) return undefined;
    const v = e.value.kind === 'scalar' ? e.value.value : undefined;
    if (typeof v !== 'number' || !Number.isInteger(v)) {
      this.problem(`must be a whole number, not ${describeLocated(e.value)}`, e.line, key);
      return undefined;
    }
    if (opts.min !== undefined && v < opts.min) {
      this.problem(`must be at least ${opts.min}, not ${v}`, e.line, key);
      return undefined;
    }
    if (opts.max !== undefined && v > opts.max) {
      this.problem(`must be at most ${opts.max}, not ${v}`, e.line, key);
      return undefined;
    }
    return v;
  }

  number(key: string, opts: { min?: number } = {}): number | undefined {
    const e = this.entry(key);
    if (!e) return undefined;
    const v = e.value.kind === 'scalar' ? e.value.value : undefined;
    if (typeof v !== 'number' || !Number.isFinite(v)) {
      this.problem(`must be a number, not ${describeLocated(e.value)}`, e.line, key);
      return undefined;
    }
    if (opts.min !== undefined && v < opts.min) {
      this.problem(`must be at least ${opts.min}, not ${v}`, e.line, key);
      return undefined;
    }
    return v;
  }

  /** A duration such as `30s`; `maxMs` bounds it. */
  duration(key: string, opts: { minMs?: number; maxMs?: number } = {}): number | undefined {
    const e = this.entry(key);
    if (!e) return undefined;
    const v = e.value.kind === 'scalar' ? e.value.value : undefined;
    if (typeof v !== 'string') {
      this.problem(`must be a duration such as 30s, 5m or 1h, not ${describeLocated(e.value)}`, e.line, key);
      return undefined;
    }
    const parsed = parseDuration(v);
    if (!parsed.ok) {
      this.problem(parsed.error, e.line, key);
      return undefined;
    }
    if (opts.minMs !== undefined && parsed.value < opts.minMs) {
      this.problem(`must be at least ${opts.minMs}ms, not ${v}`, e.line, key);
      return undefined;
    }
    if (opts.maxMs !== undefined && parsed.value > opts.maxMs) {
      this.problem(`is longer than the limit of ${Math.round(opts.maxMs / 86_400_000)} days`, e.line, key);
      return undefined;
    }
    return parsed.value;
  }

  oneOf<T extends string>(key: string, options: readonly T[]): T | undefined {
    const e = this.entry(key);
    if (!e) return undefined;
    const v = e.value.kind === 'scalar' ? e.value.value : undefined;
    if (typeof v !== 'string' || !(options as readonly string[]).includes(v)) {
      const hint = typeof v === 'string' ? suggest(v, options) : undefined;
      this.problem(
        `must be one of ${options.join(', ')}, not ${describeLocated(e.value)}${hint ? ` (did you mean "${hint}"?)` : ''}`,
        e.line,
        key,
      );
      return undefined;
    }
    return v as T;
  }

  /** A nested map, read by its own reader. */
  map(key: string): MapReader | undefined {
    const e = this.entry(key);
    if (!e) return undefined;
    if (e.value.kind !== 'map') {
      this.problem(`must be a map of fields, not ${describeLocated(e.value)}`, e.line, key);
      return undefined;
    }
    return new MapReader(e.value, this.path ? `${this.path}.${key}` : key, this.problems, this.node);
  }

  /** A reader for a map found inside this one (an item of a list field), at `path`. */
  nested(source: Extract<Located, { kind: 'map' }>, path: string): MapReader {
    return new MapReader(source, path, this.problems, this.node);
  }

  /** Any JSON value (used for mappings and schemas). */
  json(key: string): Json | undefined {
    const e = this.entry(key);
    return e ? toJson(e.value) : undefined;
  }

  /** Marks every field read, so `done` reports none: for a map whose kind is unknown, any field may fit. */
  skipRest(): void {
    for (const e of this.source.entries) this.used.add(e.key);
  }

  /** Reports every field that was never read, with a suggestion for likely typos. */
  done(what: string): void {
    const known = [...this.used];
    for (const e of this.source.entries) {
      if (this.used.has(e.key)) continue;
      const hint = suggest(e.key, known);
      this.problem(`unknown field "${e.key}" for ${what}${hint ? ` (did you mean "${hint}"?)` : ''}`, e.line);
    }
  }
}
