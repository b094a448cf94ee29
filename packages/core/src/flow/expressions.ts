/**
 * Helpers that write JSONata expressions for code-first mappings, so that references read like code.
 * Mappings stay plain strings: `outputOf('charge', 'payment_id')` is `nodes.charge.output.payment_id`.
 */

const segment = (p: string) => (/^[A-Za-z_][A-Za-z0-9_]*$/.test(p) ? p : `\`${p.replace(/`/g, '')}\``);
const path = (parts: readonly string[]) => parts.map((p) => `.${segment(p)}`).join('');

/** The output of node `id` (or a field of it): `nodes.<id>.output.<path>`. */
export function outputOf(id: string, ...fields: string[]): string {
  return `nodes.${id}.output${path(fields)}`;
}

/** The run input (or a field of it): `input.<path>`. */
export function inputOf(...fields: string[]): string {
  return fields.length === 0 ? 'input' : `input${path(fields)}`;
}

/** Literal text in a mapping (every string of a mapping is an expression, so text is quoted). */
export function text(value: string): string {
  return JSON.stringify(value);
}
