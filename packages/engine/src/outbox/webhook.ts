import { createHmac, timingSafeEqual } from 'node:crypto';
import { secretNamesIn } from '@weft/core';
import { refusalIn } from '../outbound/address-policy.js';
import { createOutbound, type Outbound } from '../outbound/outbound.js';
import { outboundFetch } from '../outbound/outbound-fetch.js';
import { fillSecrets } from '../secrets/placeholders.js';
import { type Delivery, type OutboxRow, WEBHOOK_DESTINATION } from '../store/outbox-records.js';
import type { Destination } from './destination.js';

/** How a webhook destination calls out. */
export interface WebhookOptions {
  /** The destination name: `weft.webhook` for status callbacks, `sink:<name>` for a webhook sink. */
  readonly name?: string;
  /** A fixed URL (a sink); without it, each row names its URL (status callbacks). */
  readonly url?: string;
  /** Signs each request with HMAC-SHA256 (`x-weft-signature`) when given. */
  readonly secret?: string;
  /** Longest one request may take (default 10 s). */
  readonly timeoutMs?: number;
  /** Requests in flight at once (default 8). */
  readonly concurrency?: number;
  /** Which addresses it may reach; by default none that is loopback, private, link-local or metadata. */
  readonly outbound?: Outbound;
  /** Resolves secret placeholders (`{{secrets.NAME}}`) in a status callback's URL, in the row's namespace. */
  readonly secrets?: (namespace: string, names: readonly string[]) => Promise<Map<string, string>>;
}

/**
 * The signature header of a webhook request: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`.
 * Signing the time with the body lets a receiver refuse old requests replayed by someone else.
 */
export function signWebhook(secret: string, body: string, timestamp: number): string {
  const mac = createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');
  return `t=${timestamp},v1=${mac}`;
}

/**
 * Checks a webhook request as a receiver should: the signature matches the raw body and the secret, and
 * its time is within `toleranceSeconds` of now.
 */
export function verifyWebhook(
  secret: string,
  body: string,
  header: string | undefined,
  toleranceSeconds = 300,
  now = Date.now(),
): boolean {
  if (!header) return false;
  const parts = new Map(header.split(',').map((p) => p.trim().split('=', 2) as [string, string]));
  const t = Number(parts.get('t'));
  const given = parts.get('v1');
  if (!Number.isInteger(t) || !given || Math.abs(now / 1000 - t) > toleranceSeconds) return false;
  const expected = signWebhook(secret, body, t).split('v1=')[1]!;
  const a = Buffer.from(expected, 'hex');
  const b = Buffer.from(given, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * A destination that POSTs each message as JSON. A 2xx answer is a delivery; anything else (or no answer
 * in time) is a failure that backs off. The message id travels in `x-weft-id`, for the receiver to
 * deduplicate redeliveries.
 */
export function webhookDestination(options: WebhookOptions = {}): Destination {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const outbound = options.outbound ?? createOutbound();
  return {
    name: options.name ?? WEBHOOK_DESTINATION,
    timeoutMs: timeoutMs + 5_000,
    async deliver(rows) {
      const out: Delivery[] = new Array(rows.length);
      let next = 0;
      const worker = async () => {
        while (next < rows.length) {
          const i = next++;
          out[i] = await post(rows[i]!, options, outbound, timeoutMs);
        }
      };
      await Promise.all(Array.from({ length: Math.min(options.concurrency ?? 8, rows.length) }, worker));
      return out;
    },
  };
}

async function post(
  row: OutboxRow,
  options: WebhookOptions,
  outbound: Outbound,
  timeoutMs: number,
): Promise<Delivery> {
  const payload = row.payload;
  if (payload.kind !== 'webhook' && payload.kind !== 'publish')
    return { kind: 'failed', error: `a webhook cannot deliver a ${payload.kind} message`, permanent: true };
  const url = options.url ?? (payload.kind === 'webhook' ? payload.url : undefined);
  if (!url) return { kind: 'failed', error: 'no URL to deliver to', permanent: true };
  const names = secretNamesIn(url);
  let target = url;
  if (names.length > 0) {
    try {
      if (!options.secrets) throw new Error('this destination cannot resolve secrets');
      target = fillSecrets(url, await options.secrets(row.namespace, names));
    } catch (e) {
      return { kind: 'failed', error: `POST ${url}: ${(e as Error).message}`, permanent: true };
    }
  }
  const body = JSON.stringify(payload.message);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': 'weft',
    'x-weft-id': payload.message.id,
    'x-weft-type': payload.message.type,
  };
  if (payload.kind === 'publish' && payload.topic) headers['x-weft-topic'] = payload.topic;
  if (options.secret)
    headers['x-weft-signature'] = signWebhook(options.secret, body, Math.floor(Date.now() / 1000));
  try {
    const response = await outboundFetch(
      target,
      { method: 'POST', headers, body, signal: AbortSignal.timeout(timeoutMs), redirect: 'manual' },
      outbound.policy,
      outbound.agent,
    );
    await response.body?.cancel();
    if (response.status >= 200 && response.status < 300) return { kind: 'delivered' };
    return { kind: 'failed', error: `HTTP ${response.status} from ${url}` };
  } catch (error) {
    const refused = refusalIn(error);
    if (refused) return { kind: 'failed', error: `POST ${url}: ${refused.message}`, permanent: true };
    const e = error as Error & { cause?: { code?: string } };
    const why = e.name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : (e.cause?.code ?? e.message);
    return { kind: 'failed', error: `POST ${url} failed: ${why}` };
  }
}
