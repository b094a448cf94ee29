import { type Json, SECRET_PLACEHOLDER, secretNamesIn, WeftError } from '@weft/core';

/** What a secret's value is replaced with wherever it would be shown or stored. */
export const REDACTED = '[redacted]';

/** The secrets that placeholders in any string of `value` name. */
export function secretNamesInJson(value: Json | undefined): string[] {
  return [...new Set(secretNamesIn(JSON.stringify(value ?? null)))];
}

/** `text` with each placeholder replaced by its secret's value. */
export function fillSecrets(text: string, values: ReadonlyMap<string, string>): string {
  return text.replace(SECRET_PLACEHOLDER, (whole, name: string) => values.get(name) ?? whole);
}

/** `value` with placeholders filled in every string (keys too). */
export function fillSecretsInJson<T extends Json>(value: T, values: ReadonlyMap<string, string>): T {
  if (values.size === 0) return value;
  return mapStrings(value, (s) => fillSecrets(s, values)) as T;
}

/** `value` with every occurrence of a secret's value replaced by `[redacted]` (an echo in a response). */
export function redactSecrets<T extends Json>(value: T, values: ReadonlyMap<string, string>): T {
  const secrets = [...values.values()].filter((v) => v.length >= 4).sort((a, b) => b.length - a.length);
  if (secrets.length === 0) return value;
  return mapStrings(value, (s) => secrets.reduce((acc, v) => acc.split(v).join(REDACTED), s)) as T;
}

function mapStrings(value: Json, f: (s: string) => string): Json {
  if (typeof value === 'string') return f(value);
  if (Array.isArray(value)) return value.map((v) => mapStrings(v, f));
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [f(k), mapStrings(v as Json, f)]));
  return value;
}

/** `secrets.NAME` where an expression reads it (not `input.secrets.NAME`), or a literal placeholder. */
const SECRET_REFERENCE = /(?<![A-Za-z0-9_.$])secrets\.([A-Za-z_][A-Za-z0-9_]{0,127})/g;

/** Definitions never change once deployed: each one's names are found once. */
const named = new WeakMap<object, ReadonlySet<string>>();

/** The secrets a deployed definition names, in its expressions or as literal placeholders. */
export function secretsNamedBy(definition: object | undefined): ReadonlySet<string> {
  if (!definition) return new Set();
  let names = named.get(definition);
  if (!names) {
    names = new Set([...JSON.stringify(definition).matchAll(SECRET_REFERENCE)].map((m) => m[1]!));
    named.set(definition, names);
  }
  return names;
}

/**
 * Refuses placeholders for secrets the run's definition does not name. A placeholder is only text, so one
 * can arrive in a request through a run's input; filled, it would send a secret of the namespace wherever
 * the caller's input leads. Only secrets the deployed definition names are ever filled.
 */
export function checkSecretsNamed(names: readonly string[], named: ReadonlySet<string>): void {
  const foreign = names.filter((n) => !named.has(n));
  if (foreign.length === 0) return;
  const name = foreign[0]!;
  throw new WeftError(
    'secret_not_named',
    `the request holds the placeholder {{secrets.${name}}}, but the run's definition does not name secrets.${name}: a secret is filled in only where the deployed definition names it, never from a run's input; name it in the definition's http node if it belongs there`,
  );
}
