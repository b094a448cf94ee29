// `npm run bench -- --tracing-cost`: the report-path micro-benchmark (micro.ts) in each tracing mode, in
// turn and repeated, each in a process of its own (an OpenTelemetry SDK is registered per process).
import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { TRACING_MODES, type TracingMode } from './micro-tracing.js';
import { median } from './stats.js';

const MICRO = fileURLToPath(new URL('./micro.js', import.meta.url));
const OVERHEAD = fileURLToPath(new URL('./span-overhead.js', import.meta.url));
const run = promisify(execFile);

/** One micro.ts measurement. */
interface MicroResult {
  readonly tracing: TracingMode;
  readonly steps: number;
  readonly stepsPerSecond: number;
  readonly cpuMsPerStep: number;
  readonly spans: number;
}

/**
 * Measures each mode `repeat` times, interleaved (absent, sampled-out, on, absent, …) so that the machine's
 * drift during the benchmark falls on every mode alike; prints medians and what each mode adds to the CPU
 * of a step over `absent`, and writes every sample to `out/tracing-cost.json`.
 */
export async function runTracingCost(
  databaseUrl: string,
  options: { readonly runs: number; readonly repeat: number; readonly out: string },
  log: (line: string) => void,
): Promise<void> {
  const samples: MicroResult[] = [];
  for (let i = 0; i < options.repeat; i++) {
    for (const mode of TRACING_MODES) {
      const { stdout } = await run(process.execPath, [MICRO, databaseUrl, String(options.runs)], {
        env: { ...process.env, WEFT_BENCH_TRACING: mode },
        maxBuffer: 1 << 20,
      });
      const result = JSON.parse(stdout.trim().split('\n').at(-1)!) as MicroResult;
      log(
        `tracing ${mode} ${i + 1}/${options.repeat}: ${Math.round(result.stepsPerSecond)} steps/s, ${result.cpuMsPerStep.toFixed(3)} ms CPU/step, ${result.spans} spans`,
      );
      samples.push(result);
    }
  }
  const of = (mode: TracingMode) => samples.filter((s) => s.tracing === mode);
  const baseCpu = median(of('absent').map((s) => s.cpuMsPerStep));
  log('');
  log('| tracing     | steps/s | CPU ms/step | CPU over absent | spans/step |');
  log('| ----------- | ------: | ----------: | --------------: | ---------: |');
  for (const mode of TRACING_MODES) {
    const m = of(mode);
    const cpu = median(m.map((s) => s.cpuMsPerStep));
    const over = mode === 'absent' ? '-' : `${(((cpu - baseCpu) / baseCpu) * 100).toFixed(1)}%`;
    const spansPerStep = median(m.map((s) => s.spans / s.steps)).toFixed(2);
    log(
      `| ${mode.padEnd(11)} | ${String(Math.round(median(m.map((s) => s.stepsPerSecond)))).padStart(7)} | ${cpu.toFixed(3).padStart(11)} | ${over.padStart(15)} | ${spansPerStep.padStart(10)} |`,
    );
  }
  const calls = await spanOverheads(log);
  mkdirSync(options.out, { recursive: true });
  writeFileSync(join(options.out, 'tracing-cost.json'), `${JSON.stringify({ samples, calls }, null, 2)}\n`);
}

/** span-overhead.ts in each mode: nanoseconds per lease span and per decision span, each call on its own. */
async function spanOverheads(log: (line: string) => void): Promise<Record<string, number | string>[]> {
  const out: Record<string, number | string>[] = [];
  log('');
  log('| tracing     | lease span ns | decision span ns |');
  log('| ----------- | ------------: | ---------------: |');
  for (const mode of TRACING_MODES) {
    const { stdout } = await run(process.execPath, [OVERHEAD], {
      env: { ...process.env, WEFT_BENCH_TRACING: mode },
    });
    const r = JSON.parse(stdout.trim().split('\n').at(-1)!) as {
      leaseSpanNs: number;
      decisionSpanNs: number;
    };
    log(
      `| ${mode.padEnd(11)} | ${Math.round(r.leaseSpanNs).toString().padStart(13)} | ${Math.round(r.decisionSpanNs).toString().padStart(16)} |`,
    );
    out.push({ tracing: mode, ...r });
  }
  return out;
}
