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
export async function peakRss(pid: number): Promise<number> {
  try {
    const { readFile } = await import('node:fs/promises');
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const kb = /VmHWM:\s+(\d+) kB/.exec(status)?.[1];
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

/** CPU time used by every PostgreSQL process on this machine, in milliseconds. */
export async function postgresCpuMs(): Promise<number> {
  try {
    const { readdir, readFile } = await import('node:fs/promises');
    let total = 0;
    for (const entry of await readdir('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const comm = (await readFile(`/proc/${entry}/comm`, 'utf8')).trim();
        if (comm === 'postgres' || comm.startsWith('postgres')) total += await cpuMs(Number(entry));
      } catch {
        // the process ended
      }
    }
    return total;
  } catch {
    return 0;
  }
}
