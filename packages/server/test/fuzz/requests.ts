import type { RouteInfo } from '@weft/server';
import { TEST_ADMIN_KEY } from '@weft/testing';
import { HOSTILE_NUMBERS, hostileString, type Known, type Random, randomJson, validFor } from './values.js';

/** One generated request, and the shape of input it tries. */
export interface FuzzRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body?: string;
  readonly shape: string;
}

const DEEP_MARK = 'weft-fuzz-deep-value';
const DEEP = JSON.stringify(DEEP_MARK);
type Schema = Record<string, any>;

/** A request for `route`: valid values from its schemas with one hostile change, or none. */
export function generate(r: Random, route: RouteInfo, known: Known): FuzzRequest {
  const shapes: string[] = [];
  const path =
    pathFor(r, route, known, shapes) + queryFor(r, route.schema.querystring as Schema, known, shapes);
  const headers: Record<string, string> = {};
  let body: string | undefined;
  if (route.method !== 'GET' && route.method !== 'DELETE') {
    body = bodyFor(r, route, known, shapes);
    headers['content-type'] = 'application/json';
    if (r.chance(0.06)) {
      const type = r.pick([
        'text/plain',
        'application/x-www-form-urlencoded',
        'application/yaml',
        'application/xml',
        '',
        'application/json; charset=latin1',
      ]);
      if (type) headers['content-type'] = type;
      else delete headers['content-type'];
      shapes.push('content-type');
    }
  }
  // The test's admin key, so requests reach the routes behind authentication; now and then a hostile one.
  headers.authorization = `Bearer ${TEST_ADMIN_KEY}`;
  if (r.chance(0.04)) {
    const hostile = r.pick([
      '',
      'Bearer',
      'Bearer ',
      'Basic abc',
      `Bearer ${'k'.repeat(5000)}`,
      'Bearer weft_x_y',
    ]);
    if (hostile) headers.authorization = hostile;
    else delete headers.authorization;
    shapes.push('authorization');
  }
  if (r.chance(0.05)) {
    headers['x-weft-namespace'] = r.pick(['default', 'other', 'Bad Name', 'x'.repeat(80), 'ns-%']);
    shapes.push('namespace');
  }
  if (r.chance(0.04)) {
    headers['idempotency-key'] = r.pick(['k1', 'x'.repeat(600), ' ']);
    shapes.push('idempotency-header');
  }
  if (r.chance(0.03)) {
    headers['last-event-id'] = r.pick(['-1', '1e308', '99999999999', 'abc', '3']);
    shapes.push('last-event-id');
  }
  return {
    method: route.method,
    path,
    headers,
    ...(body !== undefined ? { body } : {}),
    shape: shapes.join('+') || 'valid',
  };
}

function pathFor(r: Random, route: RouteInfo, known: Known, shapes: string[]): string {
  const params = (route.schema.params as Schema | undefined)?.properties ?? {};
  return route.url.replace(/:(\w+)/g, (_m, name: string) => {
    if (r.chance(0.2)) {
      const { shape, value } = hostileString(r);
      shapes.push(`param-${shape}`);
      return encodePart(value.slice(0, 2000));
    }
    if (r.chance(0.02)) {
      shapes.push('param-bad-encoding');
      return r.pick(['%E0%A4%A', '%', '%zz']);
    }
    const value = params[name] ? validFor(r, params[name], known) : r.pick(known.strings);
    return encodeURIComponent(String(value));
  });
}

function queryFor(r: Random, schema: Schema | undefined, known: Known, shapes: string[]): string {
  const fields: Record<string, string> = {};
  const properties: Record<string, Schema> = schema?.properties ?? {};
  for (const [key, inner] of Object.entries(properties)) {
    if (r.chance(0.3)) fields[key] = String(validFor(r, inner, known));
  }
  const keys = Object.keys(properties);
  if (r.chance(0.3)) {
    const key =
      keys.length > 0 && r.chance(0.8) ? r.pick(keys) : r.pick(['limit', 'after', 'cursor', 'extra']);
    if (r.chance(0.5)) {
      const { shape, value } = hostileString(r);
      fields[key] = value.slice(0, 3000);
      shapes.push(`query-${shape}`);
    } else {
      fields[key] = String(r.pick(HOSTILE_NUMBERS));
      shapes.push('query-number');
    }
  }
  const text = new URLSearchParams(fields).toString();
  return text ? `?${text}` : '';
}

function bodyFor(r: Random, route: RouteInfo, known: Known, shapes: string[]): string {
  const schema = route.schema.body as Schema | undefined;
  if (route.url === '/v1/definitions' && r.chance(0.5)) return yamlBody(r, shapes);
  if (r.chance(0.04)) {
    shapes.push('malformed-json');
    return r.pick([
      '{"a":',
      '',
      'null',
      '[]',
      '"text"',
      '12',
      '{"a":1}{',
      '\u0000',
      '{"definition": "x", "definition": "y"}',
    ]);
  }
  const value = validFor(r, schema ?? {}, known);
  const mutated = mutate(r, value, shapes);
  let text = JSON.stringify(mutated) ?? 'null';
  if (text.includes(DEEP)) {
    const depth = r.pick([100, 513, 3000, 20_000]);
    text = text.replace(DEEP, `${'['.repeat(depth)}1${']'.repeat(depth)}`);
  }
  return text;
}

/** A definition as YAML, with a hostile value somewhere in it. */
function yamlBody(r: Random, shapes: string[]): string {
  shapes.push('yaml');
  const { shape, value } = hostileString(r);
  shapes.push(`yaml-${shape}`);
  const quoted = JSON.stringify(value.slice(0, 5000)); // YAML reads a JSON string as a double-quoted scalar
  return r.pick([
    `name: fuzz-y${r.int(0, 9)}\nnodes:\n  - { id: a, task_type: ${quoted} }\n`,
    `name: ${quoted}\nnodes:\n  - { id: a, task_type: t }\n`,
    `name: fuzz-y\nnodes:\n  - { id: a, task_type: t, input: { v: ${quoted} } }\n`,
    `name: fuzz-y\nnodes:\n  - { id: a, task_type: t, retry: { max_attempts: ${r.pick(HOSTILE_NUMBERS)} } }\n`,
    `name: fuzz-y\nnodes:\n  - { id: a, task_type: t, timeout: ${r.pick(['99999999d', '1e308s', '-1s', '0s'])} }\n`,
    `${'- '.repeat(r.pick([10, 1000, 5000]))}x\n`,
    `a: &a [*a]\n`,
  ]);
}

/** The paths of every value in `value`, the root included (as key lists). */
function pathsIn(value: unknown, at: (string | number)[] = [], out: (string | number)[][] = []) {
  out.push(at);
  if (Array.isArray(value)) for (const [i, v] of value.entries()) pathsIn(v, [...at, i], out);
  else if (value !== null && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) pathsIn(v, [...at, k], out);
  return out;
}

/** `value` with one hostile change at a random place, or unchanged (shape `valid`). */
function mutate(r: Random, value: unknown, shapes: string[]): unknown {
  if (r.chance(0.2)) return value;
  const paths = pathsIn(value);
  const at = r.pick(paths.length > 1 ? paths.slice(1) : paths);
  const kind = r.int(0, 6);
  let replacement: unknown;
  if (kind === 0) {
    shapes.push('missing');
    return setAt(value, at, undefined);
  } else if (kind === 1) {
    shapes.push('extra');
    const parent = at.length > 0 ? at.slice(0, -1) : at;
    return setAt(
      value,
      [...parent, r.pick(['extra', 'retires', '__proto__', 'constructor'])],
      randomJson(r, 1),
    );
  } else if (kind === 2) {
    shapes.push('wrong-type');
    replacement = randomJson(r, 2);
  } else if (kind === 3) {
    shapes.push('number');
    replacement = r.pick(HOSTILE_NUMBERS);
  } else if (kind === 4) {
    const { shape, value: text } = hostileString(r);
    shapes.push(shape);
    replacement = text;
  } else if (kind === 5) {
    shapes.push('deep');
    return setAt(value, at, DEEP_MARK);
  } else {
    shapes.push('wrong-type');
    replacement = r.pick([null, [], {}, true, [1, 2], { a: null }]);
  }
  return setAt(value, at, replacement);
}

function setAt(value: unknown, at: (string | number)[], replacement: unknown): unknown {
  if (at.length === 0) return replacement;
  const copy: any = Array.isArray(value) ? [...value] : { ...(value as object) };
  const [head, ...rest] = at;
  const inner = rest.length === 0 ? replacement : setAt(copy[head as any], rest, replacement);
  if (inner === undefined) delete copy[head as any];
  else if (head === '__proto__') Object.defineProperty(copy, '__proto__', { value: inner, enumerable: true });
  else copy[head as any] = inner;
  return copy;
}

/** Percent-encodes a path part; half of a surrogate pair goes as the bytes UTF-8 would never make. */
function encodePart(text: string): string {
  return [...text].map((ch) => (/[\ud800-\udfff]/.test(ch) ? '%ED%A0%80' : encodeURIComponent(ch))).join('');
}
