import { suggest } from '@weft/core';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';

/**
 * Turns a request that failed its route schema into problems that name the field: `body.reports[0]:
 * unknown field "retires"`, `body.worker: is required`.
 *
 * The route's own validator stops at the first error: validating with every error collected lets a body
 * made of many bad items cost memory and time in proportion (a known denial-of-service shape of JSON
 * Schema validators). So only a request that already failed is checked again for all its problems, and
 * only when it is small enough that listing them all costs little; a larger one gets its first problem.
 */

/** Largest request part (as JSON text) that is checked again for every problem. */
export const FULL_CHECK_MAX_BYTES = 64 * 1024;
/** Most problems listed in the message (all of them are in `details.problems` up to the cap). */
const MAX_LISTED = 20;
const MAX_KEPT = 200;

const ajv = new Ajv({ allErrors: true, strict: false, verbose: true, coerceTypes: false });
const validators = new WeakMap<object, ValidateFunction | null>();

/** One thing wrong with a request, where it is. */
export interface RequestProblem {
  /** `body.reports[0].attempt`, `params.id`. */
  readonly path: string;
  readonly message: string;
}

/** What a failed request part gives back: its problems, and whether the list is complete. */
export interface RequestProblems {
  readonly problems: readonly RequestProblem[];
  /** False when the part was too large to check again, or its schema could not be compiled here. */
  readonly complete: boolean;
}

/**
 * Every problem of `data` (the request's `part`: body, params, querystring, headers) against its route
 * `schema`, or the errors the route's validator found (`first`) when it cannot be checked again.
 */
export function requestProblems(
  part: string,
  schema: unknown,
  data: unknown,
  first: readonly ErrorObject[],
): RequestProblems {
  const all = recheck(schema, data);
  const errors = all ?? first;
  const seen = new Set<string>();
  const problems: RequestProblem[] = [];
  for (const error of errors) {
    const problem = describe(part, error, schema);
    const key = `${problem.path}\u0000${problem.message}`;
    if (seen.has(key) || problems.length >= MAX_KEPT) continue;
    seen.add(key);
    problems.push(problem);
  }
  return { problems, complete: all !== null };
}

const PART_NAMES: Readonly<Record<string, string>> = {
  body: 'request body',
  params: 'path',
  querystring: 'query string',
  headers: 'request headers',
};

/** The message of a 400 answer: every problem (up to a limit), each with its path. */
export function problemsMessage(part: string, found: RequestProblems): string {
  const name = PART_NAMES[part] ?? `request ${part}`;
  const listed = found.problems.slice(0, MAX_LISTED).map((p) => `${p.path}: ${p.message}`);
  const more = found.problems.length - listed.length;
  const tail = more > 0 ? `; and ${more} more (see details.problems)` : '';
  const partial = found.complete
    ? ''
    : ` (only the first problem is listed for a ${name} over ${FULL_CHECK_MAX_BYTES / 1024} KiB: fix it and send again)`;
  const what = found.problems.length === 1 ? 'a problem' : `${found.problems.length} problems`;
  return `the ${name} has ${what}: ${listed.join('; ')}${tail}${partial}`;
}

/** Every error of `data` against `schema`, or null when it cannot (or need not) be checked again. */
function recheck(schema: unknown, data: unknown): ErrorObject[] | null {
  if (schema === null || typeof schema !== 'object') return null;
  let text: string;
  try {
    text = JSON.stringify(data ?? null) ?? '';
  } catch {
    return null; // nested too deep to serialise (the stack runs out): keep the validator's first error
  }
  if (Buffer.byteLength(text) > FULL_CHECK_MAX_BYTES) return null;
  let validate = validators.get(schema);
  if (validate === undefined) {
    try {
      validate = ajv.compile(schema);
    } catch {
      validate = null; // a schema Fastify's compiler takes and this one does not: keep the first error
    }
    validators.set(schema, validate);
  }
  if (validate === null || validate(data)) return null;
  return validate.errors ?? null;
}

function describe(part: string, e: ErrorObject, schema: unknown): RequestProblem {
  const at = part + pathOf(e.instancePath);
  const params = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'additionalProperties': {
      const field = String(params.additionalProperty);
      const parent = (e.parentSchema ?? schemaAt(schema, e.schemaPath.split('/').slice(1, -1))) as
        | { properties?: object }
        | undefined;
      const known = Object.keys(parent?.properties ?? {});
      const hint = suggest(field, known);
      const expected = hint
        ? ` (did you mean "${hint}"?)`
        : known.length > 0
          ? `: no additional fields are taken here (expected ${known.join(', ')})`
          : ': no additional fields are taken here';
      return { path: at, message: `unknown field "${field}"${expected}` };
    }
    case 'required':
      return { path: at + segment(String(params.missingProperty)), message: 'is required' };
    case 'type':
      return {
        path: at,
        message: `must be ${String(params.type).split(',').join(' or ')}, not ${kindOf(e.data)}`,
      };
    case 'enum': {
      const allowed = (params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ');
      return { path: at, message: `must be one of ${allowed}, not ${JSON.stringify(e.data)}` };
    }
    default:
      return { path: at, message: e.message ?? 'is not valid' };
  }
}

/** The part of a schema a schema path (`properties/tasks/items`, from `#/...`) points at. */
function schemaAt(schema: unknown, steps: readonly string[]): unknown {
  let at = schema;
  for (const step of steps) {
    if (at === null || typeof at !== 'object') return undefined;
    at = (at as Record<string, unknown>)[step.replaceAll('~1', '/').replaceAll('~0', '~')];
  }
  return at;
}

/** A JSON pointer (`/reports/0/attempt`) as a path (`.reports[0].attempt`). */
function pathOf(pointer: string): string {
  if (pointer === '') return '';
  return pointer
    .split('/')
    .slice(1)
    .map((s) => segment(s.replaceAll('~1', '/').replaceAll('~0', '~')))
    .join('');
}

function segment(key: string): string {
  if (/^\d+$/.test(key)) return `[${key}]`;
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'string')
    return `text ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
  if (typeof value === 'object') return 'an object';
  return `${typeof value} ${String(value)}`;
}
