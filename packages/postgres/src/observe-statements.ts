import type { Sql } from 'postgres';

type Observer = (query: string) => void;
type AnyFn = (...args: unknown[]) => unknown;

/**
 * The pool `sql`, reporting each statement Weft's code sends through it, its transactions (`begin`,
 * `savepoint`) and its reserved connections: a tagged template (a statement; Weft's code nests none) or
 * `unsafe`. The driver's own per-statement hook, its `debug` option, would do the same at a price paid by
 * every statement: it captures a stack trace for each (9% of a server's CPU at 1,000 steps a second), and
 * it makes the errors of failed statements carry their parameters as enumerable properties, which a logger
 * then writes out with the error (test: "a statement's values stay out of a failed statement's error").
 */
export function observeStatements<T extends Sql | AnyFn>(target: T, observe: Observer): T {
  return new Proxy(target, {
    apply(fn, self, args) {
      const strings = args[0] as TemplateStringsArray | undefined;
      if (Array.isArray(strings?.raw)) observe(textOf(strings));
      return Reflect.apply(fn, self, args);
    },
    get(fn, key) {
      const value = Reflect.get(fn, key, fn) as unknown;
      if (typeof value !== 'function') return value;
      const method = value as AnyFn;
      switch (key) {
        case 'unsafe':
          return (query: string, ...rest: unknown[]) => {
            observe(query);
            return method.call(fn, query, ...rest);
          };
        case 'reserve':
          return async () => observeStatements((await method.call(fn)) as AnyFn, observe);
        case 'begin':
        case 'savepoint':
          // The callback, given or after a name or options, gets the transaction's `sql` observed too.
          return (...args: unknown[]) =>
            method.apply(
              fn,
              args.map((a) =>
                typeof a === 'function' ? (tx: AnyFn) => (a as AnyFn)(observeStatements(tx, observe)) : a,
              ),
            );
        default:
          return value;
      }
    },
  });
}

/** A tagged template's text, its values as `$1`, `$2`, … */
function textOf(strings: TemplateStringsArray): string {
  let text = strings[0]!;
  for (let i = 1; i < strings.length; i++) text += `$${i}${strings[i]}`;
  return text;
}
