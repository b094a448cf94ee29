import { parseDuration, WeftError } from '@weft/core';
import type { FastifyInstance } from 'fastify';

/** At most `max` requests per key in each window of `windowMs`. */
export interface RateLimit {
  readonly max: number;
  readonly windowMs: number;
}

/** Reads `N/DURATION` (such as `6000/1m`), or `off` for none. */
export function parseRateLimit(text: string): RateLimit | null {
  if (text.trim() === 'off') return null;
  const m = /^\s*([1-9][0-9]{0,8})\s*\/\s*(\S+)\s*$/.exec(text);
  const window = m ? parseDuration(m[2]!) : null;
  if (!m || !window?.ok || window.value < 1000)
    throw new WeftError(
      'bad_config',
      `the rate limit ${JSON.stringify(text)} is not valid: give requests per window, such as 6000/1m (at least 1s), or off`,
    );
  return { max: Number(m[1]), windowMs: window.value };
}

/**
 * Counts each key's requests in fixed windows, in this server (each server of a cluster counts its own),
 * and answers 429 with Retry-After once a key is over its limit. Runs after authentication, so it counts
 * keys, not addresses; requests that need no key are not counted.
 */
export function installRateLimit(app: FastifyInstance, limit: RateLimit): void {
  const windows = new Map<string, { start: number; count: number }>();
  app.addHook('onRequest', async (request, reply) => {
    const who = request.principal?.name;
    if (!who) return;
    const now = Date.now();
    if (windows.size > 10_000)
      for (const [k, w] of windows) if (now - w.start >= limit.windowMs) windows.delete(k);
    let w = windows.get(who);
    if (!w || now - w.start >= limit.windowMs) {
      w = { start: now, count: 0 };
      windows.set(who, w);
    }
    w.count++;
    if (w.count <= limit.max) return;
    const retryAfter = Math.max(1, Math.ceil((w.start + limit.windowMs - now) / 1000));
    return reply
      .status(429)
      .header('retry-after', String(retryAfter))
      .send({
        error: {
          code: 'rate_limited',
          message: `the key "${who}" sent more than ${limit.max} requests in ${limit.windowMs / 1000} s: retry in ${retryAfter} s`,
        },
      });
  });
}
