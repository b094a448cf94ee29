import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, NodeTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-node';
import type { LeasedTask } from '@weft/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { traceHandler } from '../src/handler-span.js';

// The worker SDK's span around a handler, with an SDK registered in this process and spans kept in memory.

const exporter = new InMemorySpanExporter();
const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
beforeAll(() => {
  provider.register();
});
afterAll(async () => {
  await provider.shutdown();
});

const TRACE = '0af7651916cd43dd8448eb211c80319c';
const PARENT = 'b7ad6b7169203331';
const task = (traceparent?: string): LeasedTask => ({
  task_id: 't-1',
  run_id: 'r-1',
  node_id: 'charge',
  iteration: '',
  attempt: 2,
  task_type: 'pay.charge',
  definition: 'order',
  input: null,
  lease_token: 'l-1',
  lease_expires_at: new Date().toISOString(),
  deadline_at: null,
  idempotency_key: 'k-1',
  ...(traceparent ? { traceparent } : {}),
});

describe('the handler span', () => {
  it("is a child of the task's traceparent, active while the handler runs", async () => {
    exporter.reset();
    let inside: string | undefined;
    const out = await traceHandler(task(`00-${TRACE}-${PARENT}-01`), 'w-1', () => {
      inside = trace.getActiveSpan()?.spanContext().spanId;
      return 'done';
    });
    expect(out).toBe('done');
    const [span] = exporter.getFinishedSpans();
    expect(span).toMatchObject({ name: 'weft.handle pay.charge', kind: SpanKind.CONSUMER });
    expect(span!.spanContext().traceId).toBe(TRACE);
    expect(span!.parentSpanContext?.spanId).toBe(PARENT);
    expect(inside).toBe(span!.spanContext().spanId);
    expect(span!.attributes).toMatchObject({
      'weft.run.id': 'r-1',
      'weft.node.id': 'charge',
      'weft.task.attempt': 2,
      'weft.worker.name': 'w-1',
    });
  });

  it('ends in error when the handler throws, and the error still reaches the worker', async () => {
    exporter.reset();
    await expect(
      traceHandler(task(`00-${TRACE}-${PARENT}-01`), 'w-1', async () => {
        throw new Error('card declined');
      }),
    ).rejects.toThrow('card declined');
    const [span] = exporter.getFinishedSpans();
    expect(span!.status).toEqual({ code: SpanStatusCode.ERROR, message: 'card declined' });
    expect(span!.events.map((e) => e.name)).toEqual(['exception']);
  });

  it('starts a trace of its own when the task has no (or a malformed) traceparent', async () => {
    exporter.reset();
    await traceHandler(task(), 'w-1', () => null);
    await traceHandler(task('00-zz-not-a-trace-01'), 'w-1', () => null);
    for (const span of exporter.getFinishedSpans()) expect(span.parentSpanContext).toBeUndefined();
  });
});
