import { type Json, SECRET_PLACEHOLDER, secretNamesIn } from '@weft/core';

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
