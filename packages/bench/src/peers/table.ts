import type { Workload } from '../workloads.js';
import type { RoundsOutcome } from './rounds.js';

/** The peers' table: a row per round and workload, then the medians; steps/s per contender, then ratios. */
export function peersTable(
  outcome: RoundsOutcome,
  workloads: readonly Workload[],
  settings: Record<string, Record<string, string>>,
): string {
  const names = outcome.ran;
  const ratioNames = [...new Set(outcome.rounds.flatMap((r) => Object.keys(r.ratios)))];
  const header = ['round', 'workload', ...names.map((n) => `${n} steps/s`), ...ratioNames];
  const cells: string[][] = [];
  const num = (n: number | undefined) => (n === undefined ? '-' : Math.round(n).toString());
  const ratio = (n: number | undefined) => (n === undefined ? '-' : n.toFixed(2));
  for (const r of outcome.rounds)
    cells.push([
      String(r.round),
      r.workload,
      ...names.map((n) => num(r.samples[n]?.stepsPerSec)),
      ...ratioNames.map((n) => ratio(r.ratios[n])),
    ]);
  for (const m of outcome.medians)
    cells.push([
      'median',
      m.workload,
      ...names.map((n) => num(m.stepsPerSec[n])),
      ...ratioNames.map((n) => ratio(m.ratios[n])),
    ]);
  const width = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: string[]) =>
    c.map((x, i) => (i < 2 ? x.padEnd(width[i]!) : x.padStart(width[i]!))).join('  ');
  const out = [line(header), ...cells.map(line), ''];
  out.push(
    `Workloads: ${workloads.map((w) => `${w.id} ${w.title}, ${w.runs} runs of ${w.steps} no-op steps`).join('; ')}.`,
  );
  out.push(
    'Each contender: set up afresh, the same warm-up (bursts of the measured size), then every run started at once; timed from the first start',
  );
  out.push(
    "to the last run seen completed. Ratios: Weft steps/s over the peer's, per round; the median of those.",
  );
  for (const [name, s] of Object.entries(settings))
    out.push(
      `${name}: ${Object.entries(s)
        .map(([k, v]) => `${k}: ${v}`)
        .join('; ')}.`,
    );
  for (const [name, why] of Object.entries(outcome.skipped)) out.push(`${name}: skipped: ${why}.`);
  for (const [name, why] of Object.entries(outcome.failed)) out.push(`${name}: failed: ${why}.`);
  return out.join('\n');
}
