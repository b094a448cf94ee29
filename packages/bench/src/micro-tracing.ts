// The tracing modes of the in-process probes (micro*.ts), chosen by WEFT_BENCH_TRACING: what tracing costs
// when it is off and when it is on, measured on the same engine path.
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  NodeTracerProvider,
  type ReadableSpan,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-node';

/**
 * `absent`: no OpenTelemetry SDK in the process (Weft's default; its spans are the API's no-ops).
 * `sampled-out`: an SDK registered whose sampler records nothing (spans are made, then dropped).
 * `on`: every span recorded and handed, in batches, to an exporter that drops them (the cost up to the wire).
 */
export const TRACING_MODES = ['absent', 'sampled-out', 'on'] as const;
export type TracingMode = (typeof TRACING_MODES)[number];

/** Counts what it is given and sends it nowhere. */
class DroppingExporter implements SpanExporter {
  spans = 0;
  export(spans: ReadableSpan[], done: (result: { code: number }) => void): void {
    this.spans += spans.length;
    done({ code: 0 });
  }
  async shutdown(): Promise<void> {}
}

/** Sets up the mode WEFT_BENCH_TRACING names (default `absent`); returns it and how to stop it. */
export function benchTracing(): { mode: TracingMode; spans: () => number; shutdown: () => Promise<void> } {
  const mode = (process.env.WEFT_BENCH_TRACING ?? 'absent') as TracingMode;
  if (!TRACING_MODES.includes(mode))
    throw new Error(`WEFT_BENCH_TRACING is ${mode}: choose one of ${TRACING_MODES.join(', ')}`);
  if (mode === 'absent') return { mode, spans: () => 0, shutdown: async () => {} };
  const exporter = new DroppingExporter();
  const provider = new NodeTracerProvider({
    sampler: mode === 'on' ? new AlwaysOnSampler() : new AlwaysOffSampler(),
    spanProcessors: [new BatchSpanProcessor(exporter, { maxQueueSize: 65_536, maxExportBatchSize: 4096 })],
  });
  provider.register();
  return { mode, spans: () => exporter.spans, shutdown: () => provider.shutdown() };
}

/** The caller's trace context every benchmark run is started with, as a traced client would send it. */
export const BENCH_TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
