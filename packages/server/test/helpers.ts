import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SinkConfig } from '@weft/connectors';
import { type EngineConfig, FolderBlobStore } from '@weft/engine';
import {
  type Environment,
  type RateLimit,
  type RunningServer,
  type ServeAuth,
  serve,
  type TlsFileSettings,
} from '@weft/server';
import { createTestDatabase, TEST_ADMIN_KEY, type TestDatabase } from '@weft/testing';

/**
 * A real Weft server on a fresh test database, listening on a free port, with authentication on: `call`
 * sends the test admin key unless the headers give another `authorization` (or `authorization: ''` for
 * none).
 */
export interface TestServer {
  readonly db: TestDatabase;
  readonly server: RunningServer;
  readonly url: string;
  /** Calls the API with fetch and returns status and parsed JSON. */
  call(
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<{ status: number; body: any }>;
  close(): Promise<void>;
}

export async function startTestServer(
  engine: Partial<EngineConfig> = {},
  options: {
    console?: string | null;
    outboundAllow?: string;
    secretsKey?: string;
    tls?: TlsFileSettings;
    auth?: ServeAuth;
    corsOrigins?: string[];
    rateLimit?: RateLimit;
    sinks?: readonly SinkConfig[];
    tracing?: Environment;
  } = {},
): Promise<TestServer> {
  const db = await createTestDatabase();
  const server = await serve({
    databaseUrl: db.url,
    port: 0,
    logLevel: 'silent',
    poolSize: 8,
    engine: { decidePollMs: 50, timerPollMs: 50, leasePollMs: 100, ...engine },
    blobs: new FolderBlobStore(mkdtempSync(join(tmpdir(), 'weft-blobs-'))),
    ...options,
    auth: { bootstrapAdminKey: TEST_ADMIN_KEY, ...options.auth },
  });
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const sent: Record<string, string> = { authorization: `Bearer ${TEST_ADMIN_KEY}`, ...headers };
    if (sent.authorization === '') delete sent.authorization;
    const init: RequestInit = { method, headers: sent };
    if (body !== undefined) {
      init.body = typeof body === 'string' ? body : JSON.stringify(body);
      (init.headers as Record<string, string>)['content-type'] ??=
        typeof body === 'string' ? 'application/yaml' : 'application/json';
    }
    const res = await fetch(`${server.url}${path}`, init);
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  };
  return {
    db,
    server,
    url: server.url,
    call,
    async close() {
      await server.close();
      await db.drop();
    },
  };
}
