import { describe, expect, it } from 'vitest';
import { jobId, segmentFlow, segmentsOf } from '../dist/peers/bullmq-flows.js';
import { type Contender, layersOf, type PeerRun } from '../dist/peers/contender.js';
import { runRounds } from '../dist/peers/rounds.js';
import { w1, w2 } from '../dist/workloads.js';

// The peers' shapes and the rounds' arithmetic, with no database: what every contender runs must be the
// workload's own shape, and the ratios the medians of per-round ratios.
describe('peers: shapes', () => {
  it('lays W1 and W2 out in the layers of their edges', () => {
    expect(layersOf(w1(1))).toEqual([['a'], ['b', 'c', 'd', 'e'], ['f']]);
    expect(layersOf(w2(1))).toEqual(Array.from({ length: 10 }, (_, i) => [`s${i}`]));
  });

  it('makes W2 one nested flow and W1 a job, then a flow of the join over the four branches', () => {
    const chain = segmentsOf(layersOf(w2(1)));
    expect(chain).toHaveLength(1);
    let flow = segmentFlow('r', chain, 0);
    const order: string[] = [];
    for (;;) {
      order.unshift(flow.name);
      if (!flow.children) break;
      expect(flow.children).toHaveLength(1);
      flow = flow.children[0]!;
    }
    expect(order).toEqual(Array.from({ length: 10 }, (_, i) => `s${i}`));

    const diamond = segmentsOf(layersOf(w1(1)));
    expect(diamond).toEqual([[['a']], [['b', 'c', 'd', 'e'], ['f']]]);
    const first = segmentFlow('r', diamond, 0);
    expect(first).toMatchObject({ name: 'a', opts: { jobId: jobId('r', 'a') } });
    expect(first.children).toBeUndefined();
    const join = segmentFlow('r', diamond, 1);
    expect(join.name).toBe('f');
    expect(join.children!.map((c) => c.name)).toEqual(['b', 'c', 'd', 'e']);
    expect(join.children!.map((c) => c.data.segment)).toEqual([1, 1, 1, 1]);
  });
});

/** A contender whose figures are given: steps/s per round, in turn. */
function fake(
  name: string,
  kind: 'weft' | 'peer',
  perRound: number[],
  missing: string | null = null,
): Contender {
  let call = 0;
  return {
    name,
    kind,
    missing: async () => missing,
    settings: async () => ({}),
    async run(workload): Promise<PeerRun> {
      const rate = perRound[call++ % perRound.length]!;
      if (rate < 0) throw new Error('broke');
      const steps = workload.runs * workload.steps;
      return { runs: workload.runs, steps, wallMs: (steps / rate) * 1000 };
    },
  };
}

describe('peers: rounds', () => {
  it('interleaves the contenders and takes the median of the per-round ratios', async () => {
    const lines: string[] = [];
    const order: string[] = [];
    const weft = fake('W', 'weft', [100, 200, 300]);
    const peer = fake('P', 'peer', [50, 50, 300]);
    const watch = (c: Contender): Contender => ({
      ...c,
      run: (w) => {
        order.push(`${c.name}${w.id}`);
        return c.run(w);
      },
    });
    const out = await runRounds([watch(weft), watch(peer)], [w2(3)], 3, (l) => lines.push(l));
    expect(order).toEqual(['WW2', 'PW2', 'WW2', 'PW2', 'WW2', 'PW2']);
    expect(out.rounds.map((r) => r.ratios['W/P'])).toEqual([2, 4, 1]);
    expect(out.medians[0]!.ratios['W/P']).toBe(2);
    expect(out.medians[0]!.stepsPerSec).toEqual({ W: 200, P: 50 });
  });

  it('skips a contender that misses something, naming it, and drops one that fails', async () => {
    const lines: string[] = [];
    const out = await runRounds(
      [
        fake('W', 'weft', [100]),
        fake('Gone', 'peer', [1], 'no Redis answered at redis://127.0.0.1:1'),
        fake('Broken', 'peer', [-1]),
      ],
      [w1(2)],
      2,
      (l) => lines.push(l),
    );
    expect(out.ran).toEqual(['W', 'Broken']);
    expect(out.skipped).toEqual({ Gone: 'no Redis answered at redis://127.0.0.1:1' });
    expect(lines).toContain('Gone: skipped: no Redis answered at redis://127.0.0.1:1');
    expect(out.failed.Broken).toBe('broke');
    expect(out.rounds).toHaveLength(2);
    for (const r of out.rounds) {
      expect(Object.keys(r.samples)).toEqual(['W']);
      expect(r.ratios).toEqual({});
    }
  });

  it('skips a contender whose check itself throws, saying so', async () => {
    const odd: Contender = {
      ...fake('Odd', 'peer', [1]),
      missing: async () => {
        throw new Error('ECONNRESET');
      },
    };
    const out = await runRounds([fake('W', 'weft', [100]), odd], [w1(2)], 1, () => {});
    expect(out.skipped.Odd).toBe('could not tell whether it can run: ECONNRESET');
    expect(out.ran).toEqual(['W']);
  });

  it('refuses a contender whose steps do not add up to the shape', async () => {
    const short: Contender = {
      ...fake('Short', 'peer', [100]),
      run: async (w) => ({ runs: w.runs, steps: w.runs * w.steps - 1, wallMs: 10 }),
    };
    const out = await runRounds([fake('W', 'weft', [100]), short], [w1(2)], 1, () => {});
    expect(out.failed.Short).toMatch(/ran 11 steps where 2 runs of 6 make 12/);
  });
});
