/**
 * Throw this from a handler to fail the task without retrying it (a declined card, an invalid order).
 * Any other error fails the attempt and the task is retried by its retry policy.
 */
export class TerminalError extends Error {
  override readonly name: string = 'TerminalError';
  constructor(
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
  }
}
