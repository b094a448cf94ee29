/** An error answer from the API: its HTTP status, stable code and message. */
export class WeftApiError extends Error {
  override readonly name = 'WeftApiError';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
  }
}

/** The error for a request that never got an answer (status 0, code `unreachable`), saying what to check. */
export function unreachable(url: string, error: unknown): WeftApiError {
  const cause = (error as { code?: string }).code ?? (error as Error).message;
  return new WeftApiError(
    0,
    'unreachable',
    `cannot reach the Weft server at ${url} (${cause}); ${hintFor(cause)}`,
  );
}

/** The error an answer of status 400 or more stands for, from its parsed JSON body. */
export function answerError(status: number, parsed: unknown): WeftApiError {
  const err = (parsed as { error?: { code?: string; message?: string; details?: unknown } } | null)?.error;
  return new WeftApiError(status, err?.code ?? 'http_error', err?.message ?? `HTTP ${status}`, err?.details);
}

/** What to do about a failed connection: TLS certificate problems name the settings that fix them. */
function hintFor(cause: string): string {
  if (/CERT|SIGNATURE|SELF_SIGNED|ISSUER/.test(cause))
    return "the server's certificate is not trusted: set WEFT_CA_FILE (or the tls option) to the CA that signed it";
  return 'is it running?';
}
