import { Agent, request } from 'undici';
import { SseParser } from './sse.js';
import { type TlsFiles, tlsConnectOptions, tlsFilesFromEnv } from './tls.js';

/** An error answer from the API: its HTTP status, stable code and message. */
export class WeftApiError extends Error {
  override readonly name = 'WeftApiError';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
  }
}

/** How to reach a Weft server. */
export interface ClientOptions {
  /** Base URL, such as http://127.0.0.1:8080. */
  readonly url: string;
  /** Namespace for every request (default `default`). */
  readonly namespace?: string;
  /** Connections kept open to the server. */
  readonly connections?: number;
  /** TLS files for an `https` URL; by default from WEFT_CA_FILE, WEFT_CLIENT_CERT and WEFT_CLIENT_KEY. */
  readonly tls?: TlsFiles;
  /** The API key, sent as `Authorization: Bearer <key>`; by default `WEFT_API_KEY` when set. */
  readonly apiKey?: string;
  /** Headers sent with every request (a proxy's own credentials, say); they cannot replace Weft's. */
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * The headers every request carries: extra ones first, then the namespace and the API key (by default
 * WEFT_API_KEY), which extra headers cannot replace.
 */
export function connectionHeaders(options: {
  readonly namespace?: string;
  readonly apiKey?: string;
  readonly headers?: Readonly<Record<string, string>>;
}): Record<string, string> {
  const key = options.apiKey ?? process.env.WEFT_API_KEY;
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(options.headers ?? {})) {
    const lower = name.toLowerCase();
    if (lower === 'x-weft-namespace' || lower === 'authorization' || lower === 'content-type')
      throw new Error(`header ${name} is set by the client: use the namespace or apiKey option`);
    out[lower] = value;
  }
  out['x-weft-namespace'] = options.namespace ?? 'default';
  if (key) out.authorization = `Bearer ${key}`;
  return out;
}

/**
 * The transport under the typed client: a pool of kept-alive connections, JSON requests with the
 * namespace header, API errors as `WeftApiError`, and Server-Sent Events with resumption.
 */
export abstract class ApiClient {
  readonly url: string;
  protected readonly agent: Agent;
  protected readonly headers: Record<string, string>;
  /** Namespace, key and extra headers: what every request carries. */
  protected readonly base: Record<string, string>;

  constructor(options: ClientOptions) {
    this.url = options.url.replace(/\/+$/, '');
    this.agent = new Agent({
      connections: options.connections ?? 16,
      keepAliveTimeout: 60_000,
      pipelining: 1,
      connect: tlsConnectOptions(options.tls ?? tlsFilesFromEnv()),
    });
    this.base = connectionHeaders(options);
    this.headers = { ...this.base, 'content-type': 'application/json' };
  }

  /**
   * Server-Sent Events from `path`, live: every event after `after`, then each new one as it happens. A
   * dropped connection is resumed from the last event received (Last-Event-ID), so each event arrives
   * once. Ends when `signal` aborts; throws on a 4xx answer.
   */
  protected async *events<T extends { readonly seq: number }>(
    path: string,
    options: { after?: number; signal?: AbortSignal } = {},
  ): AsyncGenerator<T> {
    let after = options.after ?? 0;
    let delay = 1000;
    const signal = options.signal;
    while (!signal?.aborted) {
      try {
        const response = await request(`${this.url}${path}`, {
          method: 'GET',
          dispatcher: this.agent,
          headers: {
            accept: 'text/event-stream',
            'last-event-id': String(after),
            ...this.base,
          },
          ...(signal ? { signal } : {}),
          headersTimeout: 30_000,
          // The server sends a comment at least every 15 s; silence beyond this is a dead connection.
          bodyTimeout: 60_000,
        });
        if (response.statusCode >= 400) {
          const text = await response.body.text();
          const err = (JSON.parse(text || 'null') as { error?: { code?: string; message?: string } } | null)
            ?.error;
          const failure = new WeftApiError(
            response.statusCode,
            err?.code ?? 'http_error',
            err?.message ?? text,
          );
          if (response.statusCode < 500) throw failure;
        } else {
          const parser = new SseParser(String(after));
          const decoder = new TextDecoder();
          for await (const chunk of response.body) {
            for (const message of parser.push(decoder.decode(chunk as Uint8Array, { stream: true }))) {
              // Named events (the run's progress) are not history: only unnamed ones carry a sequence.
              if (message.event !== 'message') continue;
              const event = JSON.parse(message.data) as T;
              if (event.seq <= after) continue;
              after = event.seq;
              yield event;
            }
            if (parser.retry !== null) delay = parser.retry;
          }
        }
      } catch (e) {
        if (signal?.aborted) return;
        if (e instanceof WeftApiError && e.status >= 400 && e.status < 500) throw e;
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, delay);
        signal?.addEventListener(
          'abort',
          () => {
            clearTimeout(timer);
            resolve();
          },
          { once: true },
        );
      });
    }
  }

  /** Closes the connections. */
  async close(): Promise<void> {
    await this.agent.close();
  }

  /** One JSON request; an error answer throws `WeftApiError`. */
  protected async call<T>(
    method: string,
    path: string,
    body?: unknown,
    type = 'application/json',
    signal?: AbortSignal,
  ): Promise<T> {
    const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
    let response: Awaited<ReturnType<typeof request>>;
    try {
      response = await request(`${this.url}${path}`, {
        method: method as 'GET',
        dispatcher: this.agent,
        headers: payload === undefined ? this.base : { ...this.headers, 'content-type': type },
        ...(payload !== undefined ? { body: payload } : {}),
        ...(signal ? { signal } : {}),
        headersTimeout: 120_000,
        bodyTimeout: 120_000,
      });
    } catch (e) {
      const cause = (e as { code?: string }).code ?? (e as Error).message;
      throw new WeftApiError(
        0,
        'unreachable',
        `cannot reach the Weft server at ${this.url} (${cause}); ${hintFor(cause)}`,
      );
    }
    const text = await response.body.text();
    const parsed = text ? (JSON.parse(text) as unknown) : null;
    if (response.statusCode >= 400) {
      const err = (parsed as { error?: { code?: string; message?: string; details?: unknown } } | null)
        ?.error;
      throw new WeftApiError(
        response.statusCode,
        err?.code ?? 'http_error',
        err?.message ?? `HTTP ${response.statusCode}`,
        err?.details,
      );
    }
    return parsed as T;
  }
}

/** What to do about a failed connection: TLS certificate problems name the settings that fix them. */
function hintFor(cause: string): string {
  if (/CERT|SIGNATURE|SELF_SIGNED|ISSUER/.test(cause))
    return "the server's certificate is not trusted: set WEFT_CA_FILE (or the tls option) to the CA that signed it";
  return 'is it running?';
}
