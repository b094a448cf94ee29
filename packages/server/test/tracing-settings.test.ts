import { startTracing, tracesWanted } from '@weft/server';
import { describe, expect, it } from 'vitest';

// Which OTEL_* settings turn tracing on. Nothing here registers an SDK: every case that would is refused
// before, or asks for no exporter.

describe('tracing settings (OTEL_* variables)', () => {
  it('is off unless an exporter or an OTLP endpoint is named', () => {
    expect(tracesWanted({})).toEqual([]);
    expect(tracesWanted({ OTEL_SERVICE_NAME: 'x' })).toEqual([]);
    expect(startTracing({})).toBeNull();
  });

  it('exports over OTLP when an endpoint is set, and to the exporters OTEL_TRACES_EXPORTER names', () => {
    expect(tracesWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toEqual(['otlp']);
    expect(tracesWanted({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' })).toEqual([
      'otlp',
    ]);
    expect(tracesWanted({ OTEL_TRACES_EXPORTER: ' otlp , console,otlp' })).toEqual(['otlp', 'console']);
  });

  it('stays off when told so, whatever else is set', () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };
    expect(tracesWanted({ ...endpoint, OTEL_SDK_DISABLED: 'true' })).toEqual([]);
    expect(tracesWanted({ ...endpoint, OTEL_TRACES_EXPORTER: 'none' })).toEqual([]);
  });

  it('refuses an exporter or a protocol it cannot use, naming the setting', () => {
    expect(() => tracesWanted({ OTEL_TRACES_EXPORTER: 'zipkin' })).toThrow(
      /OTEL_TRACES_EXPORTER names zipkin/,
    );
    expect(() =>
      startTracing({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4317',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
      }),
    ).toThrow(/OTEL_EXPORTER_OTLP_PROTOCOL to http\/protobuf or http\/json/);
  });
});
