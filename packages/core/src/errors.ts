/**
 * An error raised by Weft itself (never by a user's task). It carries a stable `code` that API clients can
 * match on, an HTTP-like `status`, and a message that says what to do about it.
 */
export class WeftError extends Error {
  override readonly name = 'WeftError';
  constructor(
    readonly code: string,
    message: string,
    readonly status = 400,
    readonly details?: unknown,
  ) {
    super(message);
  }
}

/** True when `e` is a WeftError with the given code (or any code, when none is given). */
export function isWeftError(e: unknown, code?: string): e is WeftError {
  return e instanceof WeftError && (code === undefined || e.code === code);
}
