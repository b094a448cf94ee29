import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { Agent, fetch, type Response } from 'undici';
import { type OutboundPolicy, OutboundRefused } from './address-policy.js';

/** What an outbound request carries. */
export interface OutboundRequest {
  readonly method: string;
  readonly headers: Record<string, string>;
  readonly body?: string;
  readonly signal?: AbortSignal;
  /** Follow redirects (each hop checked again), or hand a 3xx answer back as it is. */
  readonly redirect: 'follow' | 'manual';
}

const MAX_REDIRECTS = 10;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** Headers a redirect to another origin must not carry on. */
const CREDENTIAL_HEADERS = ['authorization', 'cookie', 'proxy-authorization'];

/**
 * A DNS lookup that hands the connection only addresses the policy accepts. The connection is made to the
 * address checked here, so a name that resolves to a public address once and to 127.0.0.1 the next time
 * (DNS rebinding) cannot slip through.
 */
function checkedLookup(policy: OutboundPolicy): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, found: LookupAddress[]) => {
      if (error) return callback(error, '', 0);
      let refusal: OutboundRefused | undefined;
      const accepted = found.filter((a) => {
        try {
          policy.checkAddress(hostname, a.address);
          return true;
        } catch (e) {
          refusal ??= e as OutboundRefused;
          return false;
        }
      });
      if (accepted.length === 0) return callback(refusal ?? new Error(`${hostname} has no address'`), '', 0);
      if ((options as { all?: boolean }).all)
        return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, accepted);
      callback(null, accepted[0]!.address, accepted[0]!.family);
    });
  };
}

/** The HTTP agent whose every connection goes through the policy's checked lookup. */
export function outboundAgent(policy: OutboundPolicy): Agent {
  return new Agent({ connect: { lookup: checkedLookup(policy) } });
}

/**
 * Makes an HTTP request under the outbound policy: the host is checked by name (and as a literal address),
 * the resolved address before connecting, and every redirect's target again. Rejects with an error whose
 * cause chain holds an OutboundRefused when the policy refused (see refusalIn).
 */
export async function outboundFetch(
  url: string,
  request: OutboundRequest,
  policy: OutboundPolicy,
  agent: Agent,
): Promise<Response> {
  let target = new URL(url);
  let { method, body } = request;
  const headers = Object.fromEntries(Object.entries(request.headers).map(([k, v]) => [k.toLowerCase(), v]));
  for (let hop = 0; ; hop++) {
    if (target.protocol !== 'http:' && target.protocol !== 'https:')
      throw new OutboundRefused(target.href, `${target.protocol} is not http or https`);
    policy.checkHost(target.hostname);
    const response = await fetch(target, {
      method,
      headers,
      ...(body !== undefined ? { body } : {}),
      ...(request.signal ? { signal: request.signal } : {}),
      redirect: 'manual',
      dispatcher: agent,
    });
    const location = response.headers.get('location');
    if (request.redirect === 'manual' || !location || !REDIRECTS.has(response.status)) return response;
    if (hop >= MAX_REDIRECTS) throw new Error(`more than ${MAX_REDIRECTS} redirects`);
    await response.body?.cancel();
    const next = new URL(location, target);
    if (next.origin !== target.origin) for (const h of CREDENTIAL_HEADERS) delete headers[h];
    if (
      response.status === 303 ||
      ((response.status === 301 || response.status === 302) && method === 'POST')
    ) {
      method = method === 'HEAD' ? 'HEAD' : 'GET';
      body = undefined;
      delete headers['content-type'];
    }
    target = next;
  }
}
