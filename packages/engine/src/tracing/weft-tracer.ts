import { type Attributes, ProxyTracerProvider, type Tracer, trace } from '@opentelemetry/api';

/** The instrumentation scope of Weft's spans. */
export const TRACER_NAME = '@weft/engine';

/**
 * Weft's OpenTelemetry tracer. Without a tracer provider registered (no SDK, the default) every span it
 * makes is a no-op that only carries its parent's context along.
 */
export function weftTracer(): Tracer {
  return trace.getTracer(TRACER_NAME);
}

/** The provider the API's global proxy hands out while no SDK is registered. */
const NO_SDK = new ProxyTracerProvider().getDelegate();

/**
 * True once an OpenTelemetry SDK is registered in the process. Without one every span is a no-op, so the
 * spans that only record (a decision's, a lease's) are skipped before any of their work: tracing off costs a
 * check, not a span (`npm run bench -- --tracing-cost`).
 */
export function tracingRegistered(): boolean {
  const provider = trace.getTracerProvider();
  return !(provider instanceof ProxyTracerProvider) || provider.getDelegate() !== NO_SDK;
}

/** Span attributes Weft sets (names in the `weft.` namespace; HTTP spans follow OpenTelemetry's conventions). */
export const WeftAttr = {
  runId: 'weft.run.id',
  namespace: 'weft.namespace',
  definition: 'weft.definition',
  definitionVersion: 'weft.definition.version',
  nodeId: 'weft.node.id',
  iteration: 'weft.node.iteration',
  taskId: 'weft.task.id',
  taskType: 'weft.task.type',
  attempt: 'weft.task.attempt',
  decisionSource: 'weft.decision.source',
  runCount: 'weft.run.count',
  destination: 'weft.outbox.destination',
  messageCount: 'weft.outbox.message_count',
} as const;

/** The attributes of a run, for a span about one run. */
export function runAttributes(run: {
  readonly id: string;
  readonly namespace: string;
  readonly definitionName: string;
}): Attributes {
  return {
    [WeftAttr.runId]: run.id,
    [WeftAttr.namespace]: run.namespace,
    [WeftAttr.definition]: run.definitionName,
  };
}
