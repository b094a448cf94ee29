import { OTLPTraceExporter as OtlpJsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OtlpProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import {
  defaultResource,
  detectResources,
  envDetector,
  resourceFromAttributes,
} from '@opentelemetry/resources';
import {
  BatchSpanProcessor,
  ConsoleSpanExporter,
  NodeTracerProvider,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-node';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import { WeftError } from '@weft/core';

/** Environment variables, as `process.env` holds them. */
export type Environment = Readonly<Record<string, string | undefined>>;

/** Tracing started by `startTracing`: flush and stop it when the process ends. */
export interface Tracing {
  /** The exporters spans go to (`otlp`, `console`). */
  readonly exporters: readonly string[];
  /** Exports the spans still buffered and stops. */
  shutdown(): Promise<void>;
}

/**
 * The trace exporters the standard OpenTelemetry variables ask for: `OTEL_TRACES_EXPORTER` (`otlp`,
 * `console`, `none`), or `otlp` when only an OTLP endpoint is set. None (tracing off) when nothing is set or
 * `OTEL_SDK_DISABLED=true`.
 */
export function tracesWanted(env: Environment): string[] {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return [];
  const named = (env.OTEL_TRACES_EXPORTER ?? '')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter((s) => s !== '');
  if (named.includes('none')) return [];
  if (named.length > 0) {
    const unknown = named.filter((n) => n !== 'otlp' && n !== 'console');
    if (unknown.length > 0)
      throw new WeftError(
        'bad_config',
        `OTEL_TRACES_EXPORTER names ${unknown.join(', ')}: Weft exports traces to otlp or console (or none)`,
      );
    return [...new Set(named)];
  }
  return env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT ? ['otlp'] : [];
}

/**
 * Starts OpenTelemetry tracing when the standard `OTEL_*` variables ask for it (see tracesWanted), and
 * registers it for the whole process; returns null, and costs nothing more than no-op spans, otherwise.
 * OTLP goes over HTTP, as protobuf (the default) or JSON (`OTEL_EXPORTER_OTLP_TRACES_PROTOCOL` or
 * `OTEL_EXPORTER_OTLP_PROTOCOL` = `http/json`), to `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or
 * `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/traces`. The service is named by `OTEL_SERVICE_NAME` (default
 * `serviceName`); the exporters and the batch processor read their other settings (`OTEL_EXPORTER_OTLP_HEADERS`,
 * `OTEL_BSP_*`, `OTEL_TRACES_SAMPLER`) from the process's environment, as every OpenTelemetry SDK does.
 */
export function startTracing(env: Environment = process.env, serviceName = 'weft-server'): Tracing | null {
  const exporters = tracesWanted(env);
  if (exporters.length === 0) return null;
  const spanProcessors = exporters.map((name) => new BatchSpanProcessor(exporterOf(name, env)));
  const resource = defaultResource()
    .merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: serviceName }))
    .merge(detectResources({ detectors: [envDetector] }))
    .merge(
      env.OTEL_SERVICE_NAME ? resourceFromAttributes({ [ATTR_SERVICE_NAME]: env.OTEL_SERVICE_NAME }) : null,
    );
  const provider = new NodeTracerProvider({ resource, spanProcessors });
  provider.register();
  return { exporters, shutdown: () => provider.shutdown() };
}

function exporterOf(name: string, env: Environment): SpanExporter {
  if (name === 'console') return new ConsoleSpanExporter();
  const protocol = (
    env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ??
    env.OTEL_EXPORTER_OTLP_PROTOCOL ??
    'http/protobuf'
  )
    .trim()
    .toLowerCase();
  const url = tracesEndpoint(env);
  const config = url ? { url } : {};
  if (protocol === 'http/protobuf') return new OtlpProtoExporter(config);
  if (protocol === 'http/json') return new OtlpJsonExporter(config);
  throw new WeftError(
    'bad_config',
    `the OTLP protocol ${JSON.stringify(protocol)} is not one Weft exports with: set OTEL_EXPORTER_OTLP_PROTOCOL to http/protobuf or http/json`,
  );
}

/** The traces endpoint the variables name (the signal's own, or the base endpoint's `/v1/traces`). */
function tracesEndpoint(env: Environment): string | undefined {
  const own = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  if (own) return own;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  return base ? `${base.replace(/\/+$/, '')}/v1/traces` : undefined;
}
