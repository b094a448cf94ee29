import type { Json } from '../json.js';
import { err, ok, type Result } from '../result.js';
import { type CompiledExpression, compileExpression, type ExpressionScope } from './expression.js';

/**
 * A mapping as written in YAML: every string is a JSONata expression; numbers, booleans and null are
 * literal; lists and maps are walked. To pass literal text, quote it inside the expression: `"'gold'"`.
 */
export type MappingSource = Json;

/** A problem at one place of a mapping, named by its path (`input.amount`). */
export interface MappingProblem {
  readonly path: string;
  readonly message: string;
}

/** A parsed mapping, with the node ids its expressions read. */
export interface CompiledMapping {
  readonly source: MappingSource;
  readonly refs: readonly string[];
  readonly dynamicRefs: readonly string[];
  evaluate(scope: ExpressionScope, now: Date): Promise<Result<Json, MappingProblem>>;
}

type Part =
  | { readonly kind: 'expr'; readonly path: string; readonly expr: CompiledExpression }
  | { readonly kind: 'literal'; readonly value: Json }
  | { readonly kind: 'list'; readonly items: readonly Part[] }
  | { readonly kind: 'map'; readonly fields: readonly (readonly [string, Part])[] };

/** Parses every expression of a mapping; `root` names the mapping in problems (`input`, `output`). */
export function compileMapping(
  source: MappingSource,
  root: string,
): Result<CompiledMapping, MappingProblem[]> {
  const problems: MappingProblem[] = [];
  const refs = new Set<string>();
  const dynamicRefs = new Set<string>();
  const build = (value: Json, path: string): Part => {
    if (typeof value === 'string') {
      const compiled = compileExpression(value);
      if (!compiled.ok) {
        const at = compiled.error.position === undefined ? '' : ` (at character ${compiled.error.position})`;
        problems.push({
          path,
          message: `cannot parse expression ${JSON.stringify(value)}${at}: ${compiled.error.message}`,
        });
        return { kind: 'literal', value: null };
      }
      for (const r of compiled.value.refs) refs.add(r);
      for (const r of compiled.value.dynamicRefs) dynamicRefs.add(r);
      return { kind: 'expr', path, expr: compiled.value };
    }
    if (Array.isArray(value))
      return { kind: 'list', items: value.map((item, i) => build(item, `${path}[${i}]`)) };
    if (value !== null && typeof value === 'object') {
      return {
        kind: 'map',
        fields: Object.entries(value).map(([k, v]) => [k, build(v, `${path}.${k}`)] as const),
      };
    }
    return { kind: 'literal', value };
  };
  const top = build(source, root);
  if (problems.length > 0) return err(problems);
  return ok({
    source,
    refs: [...refs],
    dynamicRefs: [...dynamicRefs],
    evaluate: (scope, now) => evaluatePart(top, scope, now),
  });
}

async function evaluatePart(
  part: Part,
  scope: ExpressionScope,
  now: Date,
): Promise<Result<Json, MappingProblem>> {
  switch (part.kind) {
    case 'literal':
      return ok(part.value);
    case 'expr': {
      const result = await part.expr.evaluate(scope, now);
      if (!result.ok)
        return err({ path: part.path, message: `${part.expr.source}: ${result.error.message}` });
      if (result.value === undefined) {
        return err({ path: part.path, message: explainMissing(part.expr.source, scope) });
      }
      return ok(result.value as Json);
    }
    case 'list': {
      const out: Json[] = [];
      for (const item of part.items) {
        const r = await evaluatePart(item, scope, now);
        if (!r.ok) return r;
        out.push(r.value);
      }
      return ok(out);
    }
    case 'map': {
      const out: { [key: string]: Json } = {};
      for (const [key, item] of part.fields) {
        const r = await evaluatePart(item, scope, now);
        if (!r.ok) return r;
        out[key] = r.value;
      }
      return ok(out);
    }
  }
}

const SIMPLE_PATH = /^\s*\$?\.?([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\s*$/;

/**
 * Says why an expression resolved to nothing. For a plain path (`nodes.fetch.output.amount`) it names the
 * first step that does not exist and what exists there instead.
 */
export function explainMissing(source: string, scope: ExpressionScope): string {
  const match = SIMPLE_PATH.exec(source);
  if (!match) return `expression ${JSON.stringify(source)} resolved to nothing`;
  const steps = match[1]!.split('.');
  let current: unknown = scope;
  const seen: string[] = [];
  for (const step of steps) {
    const here = seen.length === 0 ? 'the expression scope' : seen.join('.');
    if (current === null || typeof current !== 'object' || Array.isArray(current)) {
      return `${steps.join('.')} does not exist: ${here} is ${describe(current)}, not an object`;
    }
    if (!Object.hasOwn(current, step)) {
      const keys = Object.keys(current);
      const hint =
        seen.length === 0
          ? ` (use ${keys.join(', ')})`
          : keys.length
            ? ` (it has ${keys.slice(0, 10).join(', ')})`
            : ' (it is empty)';
      const quoted =
        seen.length === 0
          ? `; to pass the text ${JSON.stringify(source)} itself, quote it: "'${source}'"`
          : '';
      return `${steps.join('.')} does not exist: ${here} has no "${step}"${hint}${quoted}`;
    }
    current = (current as Record<string, unknown>)[step];
    seen.push(step);
  }
  return `${steps.join('.')} resolved to nothing`;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  return typeof value === 'string' ? 'text' : typeof value;
}
