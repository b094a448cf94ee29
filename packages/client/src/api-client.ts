import { Agent, request } from 'undici';
import { answerError, unreachable, WeftApiError } from './api-error.js';
import { type ClientOptions, connectionHeaders } from './connection.js';
import { SseParser } from './sse.js';
import { TaskCalls } from './task-calls.js';
import { tlsConnectOptions, tlsFilesFromEnv } from './tls.js';

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
  /** The worker protocol's calls, made through `call` (written once, shared with `TaskProtocolClient`). */
  protected readonly taskCalls = new TaskCalls((method, path, body, signal) =>
    this.call(method, path, body, 'application/json', signal),
  );

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
      throw unreachable(this.url, e);
    }
    const text = await response.body.text();
    const parsed = text ? (JSON.parse(text) as unknown) : null;
    if (response.statusCode >= 400) throw answerError(response.statusCode, parsed);
    return parsed as T;
  }
}
