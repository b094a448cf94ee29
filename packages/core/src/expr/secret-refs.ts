/**
 * Secrets in expressions. `secrets.NAME` never evaluates to the secret: it evaluates to a placeholder
 * (`{{secrets.NAME}}`) that travels in task inputs and history, and only the call that uses it (an `http`
 * node's url, headers and body; a status callback's URL) swaps in the value, at the moment of the call.
 */

/** What a secret's name may be: letters, digits and `_`, starting with a letter or `_`, up to 128. */
export const SECRET_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

/** What stands for a secret until the moment of the call. */
export function secretPlaceholder(name: string): string {
  return `{{secrets.${name}}}`;
}

/** Finds placeholders in text; group 1 is the name. */
export const SECRET_PLACEHOLDER = /\{\{secrets\.([A-Za-z_][A-Za-z0-9_]{0,127})\}\}/g;

/** The names of the secrets a text names through placeholders. */
export function secretNamesIn(text: string): string[] {
  return [...new Set([...text.matchAll(SECRET_PLACEHOLDER)].map((m) => m[1]!))];
}

/** The `secrets` an expression reads: an object of placeholders for the names it references. */
export function secretBindings(names: readonly string[]): Record<string, string> {
  return Object.fromEntries(names.map((n) => [n, secretPlaceholder(n)]));
}
