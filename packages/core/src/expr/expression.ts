import jsonata from 'jsonata';
import { err, ok, type Result } from '../result.js';
import { secretBindings } from './secret-refs.js';

/** Limits that keep one expression from stalling an evaluation. They are counts, never clock time. */
export interface ExpressionLimits {
  /** Most evaluation steps (AST node visits) one evaluation may take. */
  readonly maxSteps: number;
}

/** Default limits: generous for mappings and conditions, small enough to stop a runaway loop quickly. */
export const DEFAULT_LIMITS: ExpressionLimits = { maxSteps: 100_000 };

/** Deepest nesting of evaluation (recursion depth) an expression may reach. */
export const MAX_DEPTH = 500;

/** What an expression can read: the names are both root fields (`input.x`) and variables (`$input.x`). */
export interface ExpressionScope {
  readonly input: unknown;
  readonly nodes: Readonly<Record<string, unknown>>;
  readonly vars: unknown;
  readonly run: unknown;
  readonly [extra: string]: unknown;
}

/** A problem found while parsing or evaluating an expression. */
export interface ExpressionProblem {
  readonly message: string;
  /** Character offset in the expression source, when known. */
  readonly position?: number;
}

/** A parsed JSONata expression, with the node ids it reads through `nodes.<id>`. */
export interface CompiledExpression {
  readonly source: string;
  /** Node ids the expression reads (`nodes.<id>`); the evaluator loads exactly these. */
  readonly refs: readonly string[];
  /** References the evaluator cannot resolve statically, such as `nodes.*`; reported at deploy. */
  readonly dynamicRefs: readonly string[];
  /** Secrets the expression names (`secrets.NAME`); each evaluates to its placeholder, never its value. */
  readonly secrets: readonly string[];
  evaluate(
    scope: ExpressionScope,
    now: Date,
    limits?: ExpressionLimits,
  ): Promise<Result<unknown, ExpressionProblem>>;
}

type AstNode = Omit<jsonata.ExprNode, 'type'> & {
  type: string;
  steps?: AstNode[];
  stages?: AstNode[];
  expr?: AstNode;
};

const STEP_COUNTER = Symbol('weft.steps');
const MAX_STEPS = '__weft_max_steps';

interface Frame {
  readonly base: Record<symbol, number>;
  lookup(name: string): unknown;
}

const ENTRY = Symbol.for('jsonata.__evaluate_entry');

/** Parses `source` as JSONata. Parsing is cached per source text: definitions share expressions. */
export function compileExpression(source: string): Result<CompiledExpression, ExpressionProblem> {
  const cached = cache.get(source);
  if (cached) return ok(cached);
  let expression: jsonata.Expression;
  try {
    expression = jsonata(source, { stack: MAX_DEPTH });
  } catch (e) {
    const problem = e as { message?: string; position?: number };
    return err({ message: problem.message ?? String(e), position: problem.position });
  }
  const refs = new Set<string>();
  const dynamicRefs = new Set<string>();
  collectRefs(expression.ast() as AstNode, refs, dynamicRefs);
  const secretNames = new Set<string>();
  collectSecrets(expression.ast() as AstNode, secretNames);
  const secrets = secretBindings([...secretNames]);
  // The entry hook counts steps on the per-evaluation frame (`environment.base`), so concurrent
  // evaluations of one expression keep separate counts; the limit travels in that evaluation's bindings.
  expression.assign(ENTRY as unknown as string, (_e: unknown, _i: unknown, environment: Frame) => {
    const base = environment.base;
    const steps = (base[STEP_COUNTER] ?? 0) + 1;
    base[STEP_COUNTER] = steps;
    const max = environment.lookup(MAX_STEPS) as number;
    if (steps > max) {
      throw { code: 'WEFT_STEPS', message: `expression took more than ${max} evaluation steps` };
    }
  });
  const compiled: CompiledExpression = {
    source,
    refs: [...refs],
    dynamicRefs: [...dynamicRefs],
    secrets: [...secretNames],
    async evaluate(scope, now, given = DEFAULT_LIMITS) {
      const bindings: Record<string, unknown> = {
        [MAX_STEPS]: given.maxSteps,
        input: scope.input,
        nodes: scope.nodes,
        vars: scope.vars,
        run: scope.run,
        secrets,
        now: () => now.toISOString(),
        millis: () => now.getTime(),
        random: () => {
          throw { message: '$random() is not allowed: decisions must be repeatable' };
        },
      };
      for (const [key, value] of Object.entries(scope)) bindings[key] = value;
      try {
        const value = await expression.evaluate(secretNames.size ? { ...scope, secrets } : scope, bindings);
        return ok(normalise(value));
      } catch (e) {
        const problem = e as { message?: string; position?: number; code?: string; value?: unknown };
        if (problem.code === 'D1011') {
          return err({ message: `expression nests deeper than ${MAX_DEPTH} levels` });
        }
        return err({ message: problem.message ?? String(e), position: problem.position });
      }
    },
  };
  cache.set(source, compiled);
  if (cache.size > 10_000) cache.delete(cache.keys().next().value as string);
  return ok(compiled);
}

const cache = new Map<string, CompiledExpression>();

/** JSONata returns sequences (arrays with extra flags); turn them into plain JSON values. */
function normalise(value: unknown): unknown {
  if (value === undefined) return undefined;
  if (typeof value === 'function') return undefined;
  return JSON.parse(JSON.stringify(value)) as unknown;
}

function collectRefs(node: AstNode | undefined, refs: Set<string>, dynamic: Set<string>): void {
  if (!node || typeof node !== 'object') return;
  if (node.type === 'path' && Array.isArray(node.steps)) inspectPath(node.steps, refs, dynamic);
  for (const value of Object.values(node)) {
    if (Array.isArray(value)) {
      for (const item of value) {
        if (Array.isArray(item)) for (const inner of item) collectRefs(inner as AstNode, refs, dynamic);
        else collectRefs(item as AstNode, refs, dynamic);
      }
    } else if (value && typeof value === 'object') {
      collectRefs(value as AstNode, refs, dynamic);
    }
  }
}

/** Finds `secrets.<NAME>` and `$secrets.<NAME>` anywhere in an expression. */
function collectSecrets(node: AstNode | undefined, names: Set<string>): void {
  if (!node || typeof node !== 'object') return;
  if (node.type === 'path' && Array.isArray(node.steps)) {
    const [head, next] = node.steps;
    const isSecrets =
      (head?.type === 'name' || head?.type === 'variable') &&
      head.value === 'secrets' &&
      !head.stages?.length;
    if (isSecrets && next?.type === 'name') names.add(String(next.value));
  }
  for (const value of Object.values(node)) {
    if (Array.isArray(value)) for (const item of value.flat()) collectSecrets(item as AstNode, names);
    else if (value && typeof value === 'object') collectSecrets(value as AstNode, names);
  }
}

/** Finds `nodes.<id>`, `$nodes.<id>` and `$.nodes.<id>` at the start of a path. */
function inspectPath(steps: AstNode[], refs: Set<string>, dynamic: Set<string>): void {
  let index = 0;
  const first = steps[0];
  if (first?.type === 'variable' && first.value === '') index = 1;
  const head = steps[index];
  const isNodes =
    head !== undefined &&
    ((head.type === 'name' && head.value === 'nodes' && (index === 1 || first?.type === 'name')) ||
      (head.type === 'variable' && head.value === 'nodes'));
  if (!isNodes) return;
  const next = steps[index + 1];
  if (head.stages?.length || next === undefined || next.type !== 'name') {
    dynamic.add(next?.type === 'wildcard' ? 'nodes.*' : 'nodes');
    return;
  }
  refs.add(String(next.value));
}
