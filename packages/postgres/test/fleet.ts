import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Engine, type EngineConfig, FolderBlobStore, type LeasedTask } from '@weft/engine';
import { PgStore } from '@weft/postgres';
import { createTestDatabase, type TestDatabase } from '@weft/testing';

/**
 * Several engines on one test database, each with its own connection pool: what several servers (or
 * dispatchers) look like to PostgreSQL. Contention tests race their transactions for real.
 */
export interface Fleet {
  readonly db: TestDatabase;
  readonly engines: Engine[];
  /** The first engine: the only one running background loops. */
  readonly main: Engine;
  close(): Promise<void>;
}

/** A temporary folder for blobs, so tests never write into the work tree. */
export function tempBlobs(): FolderBlobStore {
  return new FolderBlobStore(mkdtempSync(join(tmpdir(), 'weft-blobs-')));
}

/** Creates `size` engines on a fresh database; only the first runs background loops. */
export async function fleet(size: number, config: Partial<EngineConfig> = {}): Promise<Fleet> {
  const db = await createTestDatabase();
  const blobs = tempBlobs();
  const engines: Engine[] = [];
  for (let i = 0; i < size; i++) {
    const engine = new Engine({
      store: new PgStore(db.pool(3)),
      blobs,
      config: {
        decidePollMs: 20,
        timerPollMs: 20,
        leasePollMs: 50,
        crossProcessWakeups: false,
        backgroundLoops: i === 0,
        sweepPollMs: 3_600_000,
        schedulePollMs: 3_600_000,
        ...config,
      },
    });
    await engine.start();
    engines.push(engine);
  }
  return {
    db,
    engines,
    main: engines[0]!,
    async close() {
      for (const e of engines) await e.stop();
      await db.drop();
    },
  };
}

/** Every engine polls at once (no waiting), each for up to `max` tasks; returns what each got. */
export async function pollAll(
  engines: readonly Engine[],
  taskTypes: string[],
  max: number,
  namespace = 'default',
): Promise<LeasedTask[][]> {
  return Promise.all(
    engines.map((e, i) => e.tasks.poll({ namespace, worker: `w${i}`, taskTypes, max, waitMs: 0 })),
  );
}
