import { median } from '../stats.js';
import type { Workload } from '../workloads.js';
import type { Contender, PeerRun } from './contender.js';

/** One contender's figures on one workload in one round. */
export interface PeerSample extends PeerRun {
  readonly stepsPerSec: number;
}

/** One workload in one round: every contender's sample, and each Weft contender's ratio to each peer. */
export interface RoundResult {
  readonly round: number;
  readonly workload: string;
  readonly samples: Record<string, PeerSample>;
  /** `Weft server/DBOS` and the like: steps/s of the Weft contender over the peer's, this round. */
  readonly ratios: Record<string, number>;
}

/** Per workload: the median steps/s of each contender and the median of each per-round ratio. */
export interface PeerMedians {
  readonly workload: string;
  readonly stepsPerSec: Record<string, number>;
  readonly ratios: Record<string, number>;
}

/** What the rounds found: the contenders that ran, those skipped and why, every round and the medians. */
export interface RoundsOutcome {
  readonly ran: string[];
  readonly skipped: Record<string, string>;
  /** Contenders that failed in a round and were left out of the rounds after it. */
  readonly failed: Record<string, string>;
  readonly rounds: RoundResult[];
  readonly medians: PeerMedians[];
}

/**
 * Runs the contenders interleaved: in each of `repeat` rounds, each workload in turn on each contender in
 * turn, so that a change of load on the machine falls on all of them alike. A contender that is missing
 * something is skipped with the reason; one that fails is dropped from later rounds, the reason kept.
 */
export async function runRounds(
  contenders: readonly Contender[],
  workloads: readonly Workload[],
  repeat: number,
  log: (line: string) => void,
): Promise<RoundsOutcome> {
  const skipped: Record<string, string> = {};
  const failed: Record<string, string> = {};
  const active: Contender[] = [];
  for (const c of contenders) {
    const why = await c.missing().catch((e: Error) => `could not tell whether it can run: ${e.message}`);
    if (why === null) active.push(c);
    else {
      skipped[c.name] = why;
      log(`${c.name}: skipped: ${why}`);
    }
  }
  const rounds: RoundResult[] = [];
  for (let round = 1; round <= repeat; round++) {
    for (const workload of workloads) {
      const samples: Record<string, PeerSample> = {};
      for (const c of active) {
        if (failed[c.name]) continue;
        const label = `round ${round}/${repeat} ${workload.id} ${c.name}`;
        try {
          const r = await c.run(workload);
          const expected = workload.runs * workload.steps;
          if (r.steps !== expected)
            throw new Error(
              `ran ${r.steps} steps where ${workload.runs} runs of ${workload.steps} make ${expected}`,
            );
          samples[c.name] = { ...r, stepsPerSec: r.steps / (r.wallMs / 1000) };
          log(
            `${label}: ${Math.round(samples[c.name]!.stepsPerSec)} steps/s (${(r.wallMs / 1000).toFixed(2)} s)`,
          );
        } catch (e) {
          failed[c.name] = (e as Error).message;
          log(`${label}: failed, left out of later rounds: ${(e as Error).message}`);
        }
      }
      rounds.push({ round, workload: workload.id, samples, ratios: ratiosOf(active, samples) });
    }
  }
  return { ran: active.map((c) => c.name), skipped, failed, rounds, medians: mediansOf(workloads, rounds) };
}

/** Each Weft contender's steps/s over each peer's, for the contenders that have a sample. */
function ratiosOf(
  contenders: readonly Contender[],
  samples: Record<string, PeerSample>,
): Record<string, number> {
  const ratios: Record<string, number> = {};
  for (const weft of contenders.filter((c) => c.kind === 'weft'))
    for (const peer of contenders.filter((c) => c.kind === 'peer')) {
      const a = samples[weft.name];
      const b = samples[peer.name];
      if (a && b) ratios[`${weft.name}/${peer.name}`] = a.stepsPerSec / b.stepsPerSec;
    }
  return ratios;
}

function mediansOf(workloads: readonly Workload[], rounds: readonly RoundResult[]): PeerMedians[] {
  return workloads.map((w) => {
    const mine = rounds.filter((r) => r.workload === w.id);
    const collect = (pick: (r: RoundResult) => Record<string, number>) => {
      const all: Record<string, number[]> = {};
      for (const r of mine) for (const [k, v] of Object.entries(pick(r))) all[k] = [...(all[k] ?? []), v];
      return Object.fromEntries(Object.entries(all).map(([k, v]) => [k, median(v)]));
    };
    return {
      workload: w.id,
      stepsPerSec: collect((r) =>
        Object.fromEntries(Object.entries(r.samples).map(([k, s]) => [k, s.stepsPerSec])),
      ),
      ratios: collect((r) => r.ratios),
    };
  });
}
