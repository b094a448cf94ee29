import { type Command, Option } from 'commander';
import { duration, oneOf, port, positiveInt } from './arg-parsers.js';

/**
 * Server settings read only from the environment (secrets and lists have no flag: a flag's value is seen by
 * anyone who lists processes). Named in the help of `weft server` and `weft dev`.
 */
export const ENVIRONMENT_ONLY: readonly (readonly [string, string])[] = [
  ['WEFT_SECRETS_KEY', 'seals secrets at rest (32 bytes, base64)'],
  ['WEFT_SECRETS_OLD_KEYS', 'earlier keys, comma-separated, after a rotation'],
  ['WEFT_WEBHOOK_SECRET', 'signs status callbacks'],
  ['WEFT_OUTBOUND_ALLOW', 'internal hosts and ranges outbound calls may reach'],
  ['WEFT_CORS_ORIGINS', 'web origins whose pages may call the API'],
  ['WEFT_METRICS_TOKEN', 'a bearer token that may read /metrics'],
  ['WEFT_BOOTSTRAP_ADMIN_KEY', 'an admin key to create at start-up'],
  ['WEFT_S3_BUCKET', 'payloads over the threshold go to S3 (see the configuration page)'],
];

/** Settings only `weft server` reads from the environment. */
export const SERVER_ENVIRONMENT_ONLY: readonly (readonly [string, string])[] = [
  ['WEFT_AUTH', 'keys (default) or off, as --insecure-no-auth'],
  ['WEFT_RATE_LIMIT', 'requests per API key and window, such as 600/1s, or off'],
];

/** The log formats a server writes: JSON lines, or readable lines for a terminal (pino-pretty). */
export const LOG_FORMATS = ['json', 'pretty'] as const;

function flag(flags: string, description: string, env: string): Option {
  return new Option(flags, description).env(env);
}

/**
 * The options `dev` and `server` share: where to listen, logs, the pool, migrations, shutdown, leases,
 * payloads, the sweeper, dispatch, sinks and TLS. Each has an environment variable (WEFT_*, or the usual
 * DATABASE_URL and REDIS_URL), shown in `--help`; a flag wins over its variable.
 */
export function serverOptions(command: Command): Command {
  const options = [
    flag('--host <host>', 'address to listen on', 'WEFT_HOST').default('127.0.0.1'),
    flag('--port <port>', 'port to listen on', 'WEFT_PORT').argParser(port).default(8080),
    flag('--log-level <level>', 'log level (info, warn, error, silent)', 'WEFT_LOG_LEVEL').default('info'),
    flag(
      '--log-format <format>',
      'json, or pretty for people (default: pretty when `weft dev` writes to a terminal, else json)',
      'WEFT_LOG_FORMAT',
    ).argParser(oneOf(LOG_FORMATS)),
    flag('--pool-size <n>', 'PostgreSQL connections in the pool', 'WEFT_POOL_SIZE')
      .argParser(positiveInt)
      .default(20),
    // Not commander's env(): it would take any value, `false` included, as the flag given.
    new Option('--no-migrate', 'do not apply pending migrations at start (env: WEFT_NO_MIGRATE=1)'),
    flag(
      '--shutdown-grace <duration>',
      'on SIGTERM or SIGINT, longest wait for requests in flight before exiting anyway',
      'WEFT_SHUTDOWN_GRACE',
    )
      .argParser(duration)
      .default(10_000, '10s'),
    flag('--lease <duration>', 'how long a lease lasts without a heartbeat', 'WEFT_LEASE')
      .argParser(duration)
      .default(90_000, '90s'),
    flag('--heartbeat <duration>', 'how often workers are told to renew leases', 'WEFT_HEARTBEAT')
      .argParser(duration)
      .default(30_000, '30s'),
    flag(
      '--payload-threshold <size>',
      'payloads larger than this go to the blob store',
      'WEFT_PAYLOAD_THRESHOLD',
    ).default('256kb'),
    flag('--max-payload <size>', 'payloads larger than this are refused', 'WEFT_MAX_PAYLOAD').default('16mb'),
    flag(
      '--sweep-idle <duration>',
      'how long a run with nothing to wake it waits before the sweeper repairs it',
      'WEFT_SWEEP_IDLE',
    )
      .argParser(duration)
      .default(300_000, '5m'),
    flag('--dispatcher <kind>', 'how tasks reach workers: table or redis', 'WEFT_DISPATCHER'),
    flag('--redis-url <url>', 'Redis, for the Redis dispatcher', 'REDIS_URL'),
    flag(
      '--sinks <file or json>',
      'event sinks: a JSON file or JSON (see docs/reference/configuration.md)',
      'WEFT_SINKS',
    ),
    flag('--tls-cert <file>', 'serve HTTPS with this certificate (PEM); needs --tls-key', 'WEFT_TLS_CERT'),
    flag('--tls-key <file>', "the certificate's private key (PEM)", 'WEFT_TLS_KEY'),
    flag(
      '--tls-client-ca <file>',
      'require client certificates signed by this CA (mutual TLS)',
      'WEFT_TLS_CLIENT_CA',
    ),
  ];
  for (const option of options) command.addOption(option);
  return command;
}

/** Names the settings read only from the environment at the end of the command's help. */
export function environmentHelp(
  command: Command,
  extra: readonly (readonly [string, string])[] = [],
): Command {
  const rows = [...ENVIRONMENT_ONLY, ...extra];
  const width = Math.max(...rows.map(([name]) => name.length));
  const lines = rows.map(([name, what]) => `  ${name.padEnd(width)}  ${what}`);
  return command.addHelpText('after', `\nAlso read from the environment:\n${lines.join('\n')}`);
}
