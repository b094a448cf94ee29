import { CliError } from './errors.js';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** Refuses a log level pino would not know, before anything starts. */
export function checkLogLevel(level: string): void {
  if (!LOG_LEVELS.includes(level))
    throw new CliError(`--log-level must be one of ${LOG_LEVELS.join(', ')}, not ${JSON.stringify(level)}`);
}

/** Refuses a database URL that is not a postgres:// URL, before connecting. */
export function checkDatabaseUrl(url: string): void {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new CliError(`the database URL is not a URL: expected postgres://user:password@host:5432/database`);
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:')
    throw new CliError(
      `the database URL must start with postgres:// or postgresql://, not ${parsed.protocol}// (expected postgres://user:password@host:5432/database)`,
    );
}

/**
 * Turns an error met while starting a server into one line that says what to do: the database cannot be
 * reached or does not exist, the port is taken, the embedded PostgreSQL did not start. Anything else keeps
 * its own message, still on one line.
 */
export function startupError(error: unknown, where: { port?: number; host?: string } = {}): CliError {
  if (error instanceof CliError) return error;
  const e = error as { code?: string; message?: string; errors?: { code?: string }[] };
  const code = e.code ?? e.errors?.[0]?.code;
  const message = firstLine(e.message ?? String(error));
  if (code === 'EADDRINUSE')
    return new CliError(
      `port ${where.port ?? ''} on ${where.host ?? '127.0.0.1'} is in use by another process: pass --port with a free one`,
    );
  if (
    code === 'ECONNREFUSED' ||
    code === 'ENOTFOUND' ||
    code === 'EHOSTUNREACH' ||
    code === 'CONNECT_TIMEOUT'
  )
    return new CliError(`cannot reach PostgreSQL (${code}): check the database URL and that the server runs`);
  if (code === '3D000')
    return new CliError(`${message}: create it (createdb) or fix the database name in the URL`);
  if (code === '28P01' || code === '28000')
    return new CliError(`PostgreSQL refused the login (${message}): check the user and password in the URL`);
  return new CliError(message);
}

function firstLine(text: string): string {
  return text.split('\n')[0]!.trim();
}
