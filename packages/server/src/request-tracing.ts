import { context, type Span, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import {
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_URL_PATH,
  ATTR_URL_SCHEME,
  ATTR_USER_AGENT_ORIGINAL,
} from '@opentelemetry/semantic-conventions';
import { contextOfTraceparent, formatTraceparent, TRACER_NAME } from '@weft/engine';
import type { FastifyInstance, FastifyRequest } from 'fastify';

declare module 'fastify' {
  interface FastifyRequest {
    /** The request's server span (a no-op one when tracing is off); null for routes not traced. */
    traceSpan: Span | null;
  }
}

/** Only the API is traced: health checks, metrics scrapes and the console's files would drown it. */
const TRACED = /^\/v1\//;

/**
 * A server span per API request, `<METHOD> <route>`, following OpenTelemetry's HTTP conventions, under the
 * caller's W3C `traceparent` header; the handler runs with it active, so the decisions the request makes are
 * its children. With tracing off the span is a no-op that only carries the caller's context along.
 */
export function installRequestTracing(app: FastifyInstance): void {
  app.decorateRequest('traceSpan', null);
  const tracer = trace.getTracer(TRACER_NAME);
  app.addHook('onRequest', (request, _reply, done) => {
    const route = request.routeOptions.url;
    if (route === undefined || !TRACED.test(route)) return done();
    const header = request.headers.traceparent;
    const parent = contextOfTraceparent(Array.isArray(header) ? header[0] : header);
    const span = tracer.startSpan(
      `${request.method} ${route}`,
      {
        kind: SpanKind.SERVER,
        attributes: {
          [ATTR_HTTP_REQUEST_METHOD]: request.method,
          [ATTR_HTTP_ROUTE]: route,
          [ATTR_URL_PATH]: request.url.split('?', 1)[0]!,
          [ATTR_URL_SCHEME]: request.protocol,
          ...(request.headers['user-agent']
            ? { [ATTR_USER_AGENT_ORIGINAL]: request.headers['user-agent'] }
            : {}),
        },
      },
      parent,
    );
    request.traceSpan = span;
    context.with(trace.setSpan(parent, span), done);
  });
  app.addHook('onResponse', (request, reply, done) => {
    const span = request.traceSpan;
    if (span) {
      span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, reply.statusCode);
      if (reply.statusCode >= 500) {
        span.setAttribute(ATTR_ERROR_TYPE, String(reply.statusCode));
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
      span.end();
      request.traceSpan = null;
    }
    done();
  });
  app.addHook('onRequestAbort', (request, done) => {
    const span = request.traceSpan;
    if (span) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: 'the client closed the connection' });
      span.end();
      request.traceSpan = null;
    }
    done();
  });
}

/** The `traceparent` a start made by this request is traced under (its server span), if it has one. */
export function traceContextOf(request: FastifyRequest): { traceContext?: string } {
  const span = request.traceSpan;
  const value = span ? formatTraceparent(span.spanContext()) : null;
  return value ? { traceContext: value } : {};
}
