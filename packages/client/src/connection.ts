import type { TlsFiles } from './tls.js';

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
