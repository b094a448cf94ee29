import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { JsonObject } from './json.js';
import { canonicalJson } from './json.js';
import { err, ok, type Result } from './result.js';

const ajv = new Ajv({ allErrors: true, strict: false });
(addFormatsModule as unknown as (a: Ajv) => void)(ajv);
const compiled = new Map<string, ValidateFunction>();

/** Compiles a JSON Schema (cached by content) or says why it cannot be compiled. */
export function compileSchema(schema: JsonObject): Result<ValidateFunction, string> {
  const key = canonicalJson(schema);
  const hit = compiled.get(key);
  if (hit) return ok(hit);
  try {
    const fn = ajv.compile(schema);
    compiled.set(key, fn);
    return ok(fn);
  } catch (e) {
    return err((e as Error).message);
  }
}

/** Checks `value` against `schema`; the error lists each failing place, like `/amount must be number`. */
export function checkSchema(schema: JsonObject, value: unknown): Result<void, string> {
  const fn = compileSchema(schema);
  if (!fn.ok) return err(`the schema itself is invalid: ${fn.error}`);
  if (fn.value(value)) return ok(undefined);
  const messages = (fn.value.errors ?? []).map(
    (e) => `${e.instancePath || '(the whole value)'} ${e.message ?? 'is invalid'}`,
  );
  return err(messages.join('; '));
}
