import { connect } from '@weft/postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { cpuMs, postgresCpuMs, postmasterPid } from '../dist/stats.js';

// The benchmark's PostgreSQL CPU per step is the CPU of its own PostgreSQL server between two readings.
// Backends end between readings (a pool's connections, the protocol floor's, a test's): their CPU must
// stay in the sum, which must never fall.
describe('PostgreSQL CPU of the benchmark', () => {
  const admin = connect(process.env.WEFT_TEST_ADMIN_URL!, { max: 1 });
  afterAll(() => admin.end());

  it("keeps a backend's CPU in the sum after the backend has ended", async () => {
    const postmaster = await postmasterPid(admin);
    expect(postmaster).not.toBeNull();
    const sql = connect(process.env.WEFT_TEST_ADMIN_URL!, { max: 1 });
    const [row] = await sql<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`;
    // Work only this backend does: about a second of CPU, more than the other processes of a busy
    // two-core machine can spend in the moments the backend takes to end.
    // What the backend spent before (its start, the driver's first queries) is not in the difference.
    const started = await cpuMs(row!.pid);
    const before = await postgresCpuMs(postmaster);
    await sql`SELECT count(*) FROM generate_series(1, 10000000)`;
    const burnt = (await cpuMs(row!.pid)) - started;
    const alive = await postgresCpuMs(postmaster);
    expect(alive - before).toBeGreaterThanOrEqual(burnt - 20);
    await sql.end();
    // The postmaster reaps the ended backend, and its CPU moves into the postmaster's children's time.
    const until = Date.now() + 10_000;
    while ((await cpuMs(row!.pid)) > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 5));
    expect(await cpuMs(row!.pid)).toBe(0);
    const ended = await postgresCpuMs(postmaster);
    // Not less (two clock ticks of slack for the backend's last moments), and not much more: the rest of
    // this server is idle.
    expect(ended).toBeGreaterThanOrEqual(alive - 20);
    expect(ended - alive).toBeLessThan(burnt / 2);
  }, 60_000);

  it('counts nothing for a server that is not on this machine', async () => {
    expect(await postgresCpuMs(null)).toBe(0);
  });
});
