import { WeftError } from '@weft/core';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { problemsMessage, requestProblems } from './request-problems.js';

/**
 * Every error leaves as `{ "error": { "code", "message", "details"? } }`. Weft's own errors carry their
 * code and status; a malformed body is a 400; a schema violation is a 400 listing every problem with the
 * path of its field (request-problems.ts); anything else is a 500 whose details stay in the server log.
 */
export function installErrorHandler(
  app: FastifyInstance,
  options: { readonly page?: (request: FastifyRequest, reply: FastifyReply) => FastifyReply | null } = {},
): void {
  app.setErrorHandler((error: FastifyError | WeftError | Error, request, reply) => {
    if (error instanceof WeftError) {
      return reply.status(error.status).send({
        error: {
          code: error.code,
          message: error.message,
          ...(error.details ? { details: error.details } : {}),
        },
      });
    }
    const fe = error as FastifyError;
    if (fe.validation) {
      const part = fe.validationContext ?? 'body';
      const found = requestProblems(part, schemaOf(request, part), partOf(request, part), fe.validation);
      if (found.problems.length === 0) {
        return reply.status(400).send({ error: { code: 'bad_request', message: fe.message } });
      }
      return reply.status(400).send({
        error: {
          code: 'bad_request',
          message: problemsMessage(part, found),
          details: { problems: found.problems },
        },
      });
    }
    if (fe.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
      return reply.status(415).send({
        error: {
          code: 'unsupported_media_type',
          message: `send JSON (content-type application/json), or YAML to /v1/definitions as application/yaml; not ${request.headers['content-type']}`,
        },
      });
    }
    if (fe.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      return reply.status(413).send({
        error: {
          code: 'body_too_large',
          message: `the request body is larger than ${request.routeOptions.bodyLimit ?? 'the limit of'} bytes: send large values by reference, or split the request`,
        },
      });
    }
    if (fe.statusCode && fe.statusCode >= 400 && fe.statusCode < 500) {
      const code =
        fe.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' || /JSON/.test(fe.message)
          ? 'malformed_body'
          : 'bad_request';
      return reply
        .status(fe.statusCode)
        .send({ error: { code, message: `the request body is not valid: ${fe.message}` } });
    }
    request.log.error({ err: error }, 'request failed');
    return reply.status(500).send({
      error: { code: 'internal', message: 'the server failed to handle this request; see its log' },
    });
  });
  // A path no route serves: a page of the web console when `page` takes it, else a JSON 404.
  app.setNotFoundHandler(
    (request, reply) =>
      options.page?.(request, reply) ??
      reply.status(404).send({
        error: {
          code: 'not_found',
          message: `no route ${request.method} ${request.url}: see the HTTP API in the README for the routes`,
        },
      }),
  );
}

/** The route's schema for one part of the request (body, params, querystring, headers). */
function schemaOf(request: FastifyRequest, part: string): unknown {
  const schema = request.routeOptions.schema as Record<string, unknown> | undefined;
  return schema?.[part];
}

/** One part of the request, as the route's validator saw it. */
function partOf(request: FastifyRequest, part: string): unknown {
  if (part === 'params') return request.params;
  if (part === 'querystring') return request.query;
  if (part === 'headers') return request.headers;
  return request.body;
}
