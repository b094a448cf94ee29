import { readFileSync } from 'node:fs';
import { parseSinks, type SinkConfig } from '@weft/connectors';
import type { TlsFileSettings } from '@weft/server';
import { parseSize } from '../blob-config.js';
import { CliError } from '../errors.js';
import { type TlsFlags, tlsSettings } from './tls-options.js';

/** What `weft server` and `weft dev` take beyond where to listen. */
export interface ServerFlags extends TlsFlags {
  readonly dispatcher?: string;
  readonly redisUrl?: string;
  readonly sinks?: string;
  readonly blobDir?: string;
  readonly payloadThreshold: string;
  readonly maxPayload: string;
  readonly sweepIdle: number;
}

/** The engine settings for payloads and the sweeper, from flags. */
export function flowConfig(flags: ServerFlags): {
  payloadThresholdBytes: number;
  maxPayloadBytes: number;
  sweepIdleMs: number;
} {
  const payloadThresholdBytes = parseSize(flags.payloadThreshold);
  const maxPayloadBytes = parseSize(flags.maxPayload);
  if (payloadThresholdBytes > maxPayloadBytes)
    throw new CliError('--payload-threshold must not be larger than --max-payload');
  return { payloadThresholdBytes, maxPayloadBytes, sweepIdleMs: flags.sweepIdle };
}

/** The server settings for sinks and dispatch, from flags and environment. */
export function serverSettings(flags: ServerFlags): {
  sinks: SinkConfig[];
  dispatcher: 'table' | 'redis';
  redisUrl?: string;
  webhookSecret?: string;
  outboundAllow?: string;
  secretsKey?: string;
  secretsOldKeys?: string[];
  tls?: TlsFileSettings;
  corsOrigins?: string[];
} {
  const dispatcher = flags.dispatcher ?? 'table';
  if (dispatcher !== 'table' && dispatcher !== 'redis')
    throw new CliError(`--dispatcher must be table or redis, not ${JSON.stringify(dispatcher)}`);
  const redisUrl = flags.redisUrl;
  if (dispatcher === 'redis' && !redisUrl)
    throw new CliError('the Redis dispatcher needs a Redis URL: set REDIS_URL or pass --redis-url');
  const webhookSecret = process.env.WEFT_WEBHOOK_SECRET;
  const corsOrigins = (process.env.WEFT_CORS_ORIGINS ?? '')
    .split(',')
    .map((o) => o.trim())
    .filter((o) => o !== '');
  const outboundAllow = process.env.WEFT_OUTBOUND_ALLOW;
  const secretsKey = process.env.WEFT_SECRETS_KEY;
  const oldKeys = (process.env.WEFT_SECRETS_OLD_KEYS ?? '').split(',').filter((k) => k.trim() !== '');
  return {
    ...(corsOrigins.length > 0 ? { corsOrigins } : {}),
    ...tlsSettings(flags),
    ...(secretsKey ? { secretsKey, secretsOldKeys: oldKeys } : {}),
    ...(outboundAllow ? { outboundAllow } : {}),
    sinks: readSinks(flags.sinks),
    dispatcher,
    ...(redisUrl ? { redisUrl } : {}),
    ...(webhookSecret ? { webhookSecret } : {}),
  };
}

/** Sinks from `--sinks` / WEFT_SINKS: a JSON file, or the JSON itself. */
function readSinks(value: string | undefined): SinkConfig[] {
  if (!value) return [];
  let text = value;
  if (!value.trim().startsWith('{')) {
    try {
      text = readFileSync(value, 'utf8');
    } catch (e) {
      throw new CliError(`cannot read the sinks file ${value}: ${(e as Error).message}`);
    }
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    throw new CliError(`the sink settings are not valid JSON: ${(e as Error).message}`);
  }
  try {
    return parseSinks(parsed);
  } catch (e) {
    throw new CliError((e as Error).message);
  }
}
