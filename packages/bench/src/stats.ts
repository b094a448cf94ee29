import type postgres from 'postgres';

/** The value at quantile `q` (0 to 1) of a list of numbers (nearest rank). */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank]!;
}

/** The median of a list of numbers. */
export function median(values: readonly number[]): number {
  return quantile(values, 0.5);
}

/** Peak resident memory of a process in bytes, from /proc (0 where /proc is not available). */
export function peakRss(pid: number): Promise<number> {
  return statusBytes(pid, 'VmHWM');
}

/**
 * A memory figure of a process's /proc status in bytes: `VmHWM` (peak RSS) or `RssAnon` (resident private
 * memory). 0 if the process is gone or /proc is not available.
 */
export async function statusBytes(pid: number, field: 'VmHWM' | 'RssAnon'): Promise<number> {
  try {
    const { readFile } = await import('node:fs/promises');
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const kb = new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1];
    return kb ? Number(kb) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** CPU time (user + system) a process has used, in milliseconds (0 where /proc is not available). */
export async function cpuMs(pid: number): Promise<number> {
  try {
    const { readFile } = await import('node:fs/promises');
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return 0;
  }
}

/** A process's parent and CPU times (ticks: its own, and its reaped children's), from /proc; null if gone. */
async function procStat(pid: number): Promise<{ ppid: number; own: number; children: number } | null> {
  try {
    const { readFile } = await import('node:fs/promises');
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return {
      ppid: Number(f[1]),
      own: Number(f[11]) + Number(f[12]),
      children: Number(f[13]) + Number(f[14]),
    };
  } catch {
    return null;
  }
}

/**
 * The pid of the postmaster of the PostgreSQL server `sql` talks to (its backend's parent), or null when
 * that server does not run on this machine.
 */
export async function postmasterPid(sql: postgres.Sql): Promise<number | null> {
  const [row] = await sql<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`;
  const backend = await procStat(row!.pid);
  if (!backend) return null;
  try {
    const { readFile } = await import('node:fs/promises');
    const comm = (await readFile(`/proc/${backend.ppid}/comm`, 'utf8')).trim();
    return comm.startsWith('postgres') ? backend.ppid : null;
  } catch {
    return null;
  }
}

/**
 * CPU time used so far by one PostgreSQL server, in milliseconds: its postmaster, every live process it
 * started (backends, background workers), and those that have ended, which the postmaster has reaped and
 * so counts in its children's time. Other PostgreSQL servers on the machine are not counted, and a backend
 * that ends between two readings keeps its CPU in the sum. 0 when the server is not on this machine.
 */
export async function postgresCpuMs(postmaster: number | null): Promise<number> {
  if (postmaster === null) return 0;
  const main = await procStat(postmaster);
  if (!main) return 0;
  let ticks = main.own + main.children;
  try {
    const { readdir } = await import('node:fs/promises');
    for (const entry of await readdir('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      const p = await procStat(Number(entry));
      if (p?.ppid === postmaster) ticks += p.own;
    }
  } catch {
    // no /proc
  }
  return (ticks * 1000) / 100;
}
