import { authRequired, sessionHeaders } from './session.js';

/** An error answer of the API: `{"error": {"code", "message", "details"?}}` with its HTTP status. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
  }
}

/** Query-string values; undefined and empty ones are left out. */
export type Query = Record<string, string | number | boolean | undefined | null>;

/** Builds `path?query`, leaving out empty values. */
export function withQuery(path: string, query: Query = {}): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined || value === null || value === '') continue;
    params.set(name, String(value));
  }
  const text = params.toString();
  return text ? `${path}?${text}` : path;
}

/**
 * Calls the API with the session's namespace and key. JSON in, JSON out; an error answer throws an
 * `ApiError` with the server's code and message, and a 401 also opens the key prompt.
 */
export async function request<T>(
  method: string,
  path: string,
  options: { body?: unknown; yaml?: string; signal?: AbortSignal } = {},
): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json', ...sessionHeaders() };
  let body: string | undefined;
  if (options.yaml !== undefined) {
    headers['content-type'] = 'application/yaml';
    body = options.yaml;
  } else if (options.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.body);
  }
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      headers,
      ...(body !== undefined ? { body } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    });
  } catch (error) {
    if (error instanceof DOMException && error.name === 'AbortError') throw error;
    throw new ApiError(0, 'unreachable', 'the Weft server did not answer; check that it is running');
  }
  const text = await response.text();
  const parsed = parse(text);
  if (!response.ok) {
    if (response.status === 401) authRequired();
    const error = (parsed as { error?: { code?: string; message?: string; details?: unknown } } | null)
      ?.error;
    throw new ApiError(
      response.status,
      error?.code ?? `http_${response.status}`,
      error?.message ?? (text || response.statusText),
      error?.details,
    );
  }
  return parsed as T;
}

function parse(text: string): unknown {
  if (text === '') return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/** GET as JSON. */
export const get = <T>(path: string, query?: Query, signal?: AbortSignal) =>
  request<T>('GET', withQuery(path, query), signal ? { signal } : {});

/** POST a JSON body. */
export const post = <T>(path: string, body?: unknown) => request<T>('POST', path, { body: body ?? {} });
