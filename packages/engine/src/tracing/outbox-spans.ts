import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { Delivery, OutboxRow } from '../store/outbox-records.js';
import { tracingRegistered, WeftAttr, weftTracer } from './weft-tracer.js';

/**
 * Records the span of one outbox batch once it is settled, `weft.outbox.deliver <destination>` (kind
 * producer), from `startedAt`: how many messages, how many failed, the run when all are one run's, and an
 * error status when a delivery failed or the batch's transaction did. An empty batch records nothing.
 */
export function recordDelivery(
  destination: string,
  startedAt: number,
  rows: readonly OutboxRow[],
  outcome: { readonly deliveries: readonly Delivery[] } | { readonly error: unknown },
): void {
  if (rows.length === 0 || !tracingRegistered()) return;
  const runIds = new Set(rows.map((r) => r.runId));
  const failed =
    'error' in outcome ? rows.length : outcome.deliveries.filter((d) => d.kind === 'failed').length;
  const span = weftTracer().startSpan(`weft.outbox.deliver ${destination}`, {
    kind: SpanKind.PRODUCER,
    startTime: startedAt,
    attributes: {
      [WeftAttr.destination]: destination,
      [WeftAttr.messageCount]: rows.length,
      'weft.outbox.failed_count': failed,
      ...(runIds.size === 1
        ? { [WeftAttr.runId]: rows[0]!.runId, [WeftAttr.namespace]: rows[0]!.namespace }
        : {}),
    },
  });
  if ('error' in outcome) {
    const e = outcome.error;
    span.recordException(e instanceof Error ? e : String(e));
    span.setStatus({ code: SpanStatusCode.ERROR, message: e instanceof Error ? e.message : String(e) });
  } else if (failed > 0) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: `${failed} of ${rows.length} deliveries failed` });
  }
  span.end();
}
