import { type Context, context, type SpanContext, TraceFlags, trace } from '@opentelemetry/api';

// version "00" - trace id (32 hex) - parent span id (16 hex) - flags (2 hex); see https://www.w3.org/TR/trace-context/
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
const ZERO_TRACE = '0'.repeat(32);
const ZERO_SPAN = '0'.repeat(16);

/**
 * Reads a W3C `traceparent` value: the span context it names (remote), or null for anything else (absent,
 * malformed, an unknown version, or the all-zero ids the specification forbids).
 */
export function parseTraceparent(value: string | null | undefined): SpanContext | null {
  if (typeof value !== 'string' || value.length !== 55) return null;
  const m = TRACEPARENT.exec(value);
  if (!m || m[1] === ZERO_TRACE || m[2] === ZERO_SPAN) return null;
  return { traceId: m[1]!, spanId: m[2]!, traceFlags: Number.parseInt(m[3]!, 16) & 0xff, isRemote: true };
}

/** The W3C `traceparent` of a span context, or null when the context is not valid (no trace). */
export function formatTraceparent(span: SpanContext): string | null {
  if (!trace.isSpanContextValid(span)) return null;
  const flags = (span.traceFlags & TraceFlags.SAMPLED).toString(16).padStart(2, '0');
  return `00-${span.traceId}-${span.spanId}-${flags}`;
}

/** An OpenTelemetry context whose parent span is the one a `traceparent` names (the root context for none). */
export function contextOfTraceparent(value: string | null | undefined): Context {
  const parent = parseTraceparent(value);
  return parent ? trace.setSpanContext(context.active(), parent) : context.active();
}
