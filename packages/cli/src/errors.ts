import { RunNotCompletedError, WeftApiError } from '@weft/client';
import { CommanderError } from 'commander';

/**
 * The exit codes of `weft`, for scripts: documented on the CLI reference page (`cliReference`), and the
 * same for every command. A command picks one by throwing; `exitCodeOf` maps what it threw.
 */
export const EXIT = {
  /** Done. */
  ok: 0,
  /** Anything else that went wrong (a server error, a refused request, a file that cannot be read). */
  failure: 1,
  /** The command line or a value in it is wrong (an unknown option, bad JSON, a 400 answer). */
  usage: 2,
  /** What the command names does not exist (a 404 answer). */
  notFound: 3,
  /** The server refused because of the state of what was named (a 409 answer). */
  conflict: 4,
  /** No answer from the server: not running, wrong URL, or a network or TLS problem. */
  unreachable: 5,
  /** The run waited for or watched ended without completing: failed, cancelled or terminated. */
  runNotCompleted: 6,
} as const;

/** What each exit code means, for the CLI reference page. */
export const EXIT_MEANINGS: readonly { readonly code: ExitCode; readonly meaning: string }[] = [
  { code: EXIT.ok, meaning: 'done' },
  {
    code: EXIT.failure,
    meaning: 'any other failure: a server error, a file that cannot be read, a wait that ran out',
  },
  { code: EXIT.usage, meaning: 'usage: an unknown option, a value the CLI or the server refuses (HTTP 400)' },
  { code: EXIT.notFound, meaning: 'not found: the run, definition or task named does not exist (HTTP 404)' },
  {
    code: EXIT.conflict,
    meaning:
      'conflict: refused because of the state of what was named, such as cancelling a finished run (HTTP 409)',
  },
  {
    code: EXIT.unreachable,
    meaning: 'unreachable: no answer from the server (not running, wrong URL, network or TLS problem)',
  },
  {
    code: EXIT.runNotCompleted,
    meaning:
      'the run waited for (`start --wait`) or watched (`runs watch`) failed, was cancelled or was terminated',
  },
];

/** One of the exit codes in `EXIT`. */
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** An error the CLI reports as one line and its exit code (1 unless given), without a stack trace. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode = EXIT.failure,
    /** The machine-readable code printed with `--json`. */
    readonly code = 'cli_error',
  ) {
    super(message);
  }
}

/** A wrong command line, or a value in it the CLI cannot use: exit code 2. */
export class UsageError extends CliError {
  constructor(message: string) {
    super(message, EXIT.usage, 'usage');
  }
}

/** The exit code for an HTTP status the server answered with (0 when there was no answer). */
function exitCodeOfStatus(status: number): ExitCode {
  if (status === 0) return EXIT.unreachable;
  if (status === 400 || status === 413 || status === 415 || status === 422) return EXIT.usage;
  if (status === 404) return EXIT.notFound;
  if (status === 409) return EXIT.conflict;
  return EXIT.failure;
}

/** The exit code for whatever a command threw. */
export function exitCodeOf(e: unknown): ExitCode {
  if (e instanceof CliError) return e.exitCode;
  if (e instanceof WeftApiError) return exitCodeOfStatus(e.status);
  if (e instanceof RunNotCompletedError) return EXIT.runNotCompleted;
  if (e instanceof CommanderError) return e.exitCode === 0 ? EXIT.ok : EXIT.usage;
  return EXIT.failure;
}

/**
 * What to tell the user about what a command threw: the whole message of an error the CLI or the server
 * worded for them, the first line of anything else.
 */
export function messageOf(e: unknown): string {
  const message = String((e as Error)?.message ?? e);
  const worded = e instanceof CliError || e instanceof WeftApiError || e instanceof RunNotCompletedError;
  return worded || (e as Error)?.name === 'MissingPackageError' ? message : (message.split('\n')[0] ?? '');
}

/** The `{error: {code, message}}` body `--json` prints for what a command threw. */
export function errorJson(e: unknown): { error: { code: string; message: string } } {
  const message = messageOf(e);
  const code =
    e instanceof CliError || e instanceof WeftApiError
      ? e.code
      : e instanceof RunNotCompletedError
        ? `run_${e.run.status}`
        : e instanceof CommanderError
          ? 'usage'
          : 'error';
  return { error: { code, message } };
}
