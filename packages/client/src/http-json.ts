import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { answerError, unreachable, WeftApiError } from './api-error.js';
import { type ClientOptions, connectionHeaders } from './connection.js';
import { tlsConnectOptions, tlsFilesFromEnv } from './tls.js';

/** How long a request may wait for its answer, headers and body together (as the main client's). */
const ANSWER_TIMEOUT_MS = 120_000;
/**
 * An idle kept-alive connection is closed after this: before the server closes it (65 s), so a request
 * rarely goes out on a connection the server is closing. The server's own Keep-Alive hint, when shorter, wins.
 */
const IDLE_MS = 60_000;

/**
 * JSON requests over Node's own `http`/`https` with a pool of kept-alive connections: the transport of
 * the worker protocol. It loads nothing beyond Node itself, so a worker process stays small; answers of
 * status 400 or more throw `WeftApiError`, a request that gets no answer throws one of code `unreachable`.
 */
export class HttpJson {
  readonly url: string;
  private readonly origin: URL;
  private readonly agent: HttpAgent;
  private readonly send: typeof httpRequest;
  private readonly headers: Record<string, string>;

  constructor(options: ClientOptions) {
    this.url = options.url.replace(/\/+$/, '');
    this.origin = new URL(this.url);
    const secure = this.origin.protocol === 'https:';
    const pool = {
      keepAlive: true,
      maxSockets: options.connections ?? 16,
      timeout: IDLE_MS,
      scheduling: 'lifo' as const,
    };
    // Node's https (and TLS with it) is loaded only for an https URL: a plain-HTTP worker is smaller.
    const https = secure ? process.getBuiltinModule('node:https') : null;
    this.agent = https
      ? new https.Agent({ ...pool, ...tlsConnectOptions(options.tls ?? tlsFilesFromEnv()) })
      : new HttpAgent(pool);
    this.send = https ? https.request : httpRequest;
    this.headers = { ...connectionHeaders(options), 'content-type': 'application/json' };
  }

  /** One request with a JSON body (or none); resolves to the parsed JSON answer. */
  async call<T>(method: 'GET' | 'POST', path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    let answer: { status: number; text: string };
    try {
      answer = await this.exchange(method, path, payload, signal);
    } catch (e) {
      throw unreachable(this.url, e);
    }
    const parsed = parseAnswer(answer.text);
    if (answer.status >= 400) throw answerError(answer.status, parsed === NOT_JSON ? null : parsed);
    if (parsed === NOT_JSON)
      throw new WeftApiError(
        answer.status,
        'not_json',
        `${this.url}${path} answered with something that is not JSON: check that the url is a Weft server's address`,
      );
    return parsed as T;
  }

  /** Closes the connections. */
  async close(): Promise<void> {
    this.agent.destroy();
  }

  private exchange(
    method: string,
    path: string,
    payload: string | undefined,
    signal: AbortSignal | undefined,
  ): Promise<{ status: number; text: string }> {
    return new Promise((resolve, reject) => {
      const req = this.send({
        protocol: this.origin.protocol,
        hostname: this.origin.hostname,
        port: this.origin.port,
        path: `${this.origin.pathname.replace(/\/$/, '')}${path}`,
        method,
        agent: this.agent,
        headers:
          payload === undefined
            ? this.headers
            : { ...this.headers, 'content-length': Buffer.byteLength(payload) },
        ...(signal ? { signal } : {}),
      });
      req.setTimeout(ANSWER_TIMEOUT_MS, () => req.destroy(new Error('no answer in time')));
      req.on('response', (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      });
      // Not resent here, as the main client does not: the worker resends what failed itself, fenced.
      req.on('error', reject);
      // The text goes out as it is, encoded once by the socket: no copy of it into a buffer first.
      req.end(payload);
    });
  }
}

/** What an answer that does not parse as JSON (a proxy's error page, say) stands for. */
const NOT_JSON = Symbol('not JSON');

/** The answer's JSON (null for an empty body), or NOT_JSON. */
function parseAnswer(text: string): unknown {
  if (!text) return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return NOT_JSON;
  }
}
