import { type BlobStore, Engine, type EngineConfig } from '@weft/engine';
import { connect, migrate, PgStore } from '@weft/postgres';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { buildApp } from './app.js';

/** How to run a server. */
export interface ServeOptions {
  readonly databaseUrl: string;
  readonly host?: string;
  /** 0 picks a free port. */
  readonly port?: number;
  /** Apply pending migrations before serving (default true). */
  readonly migrate?: boolean;
  /** Connections in the pool. */
  readonly poolSize?: number;
  readonly engine?: Partial<EngineConfig>;
  /** Log level; `silent` for none. */
  readonly logLevel?: string;
  /** Where large payloads go (a folder `.weft/blobs` by default). */
  readonly blobs?: BlobStore;
}

/** A running server. */
export interface RunningServer {
  readonly url: string;
  readonly app: FastifyInstance;
  readonly engine: Engine;
  readonly store: PgStore;
  close(): Promise<void>;
}

/** Connects to PostgreSQL, migrates, starts the engine's background loops and serves the HTTP API. */
export async function serve(options: ServeOptions): Promise<RunningServer> {
  const logger = pino({ level: options.logLevel ?? 'info', base: { service: 'weft' } });
  const sql = connect(options.databaseUrl, { max: options.poolSize ?? 20, applicationName: 'weft-server' });
  try {
    if (options.migrate ?? true)
      await migrate(sql, (m) => logger.info({ migration: m.id }, `applied migration ${m.name}`));
  } catch (e) {
    await sql.end();
    throw e;
  }
  const store = new PgStore(sql);
  const engine = new Engine({
    store,
    ...(options.engine ? { config: options.engine } : {}),
    ...(options.blobs ? { blobs: options.blobs } : {}),
    logger,
  });
  const app = buildApp({ engine, logger });
  await engine.start();
  const address = await app.listen({ host: options.host ?? '127.0.0.1', port: options.port ?? 8080 });
  return {
    url: address,
    app,
    engine,
    store,
    async close() {
      await app.close();
      await engine.stop();
      await store.close();
    },
  };
}
