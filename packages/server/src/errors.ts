import { WeftError } from '@weft/core';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/**
 * Every error leaves as `{ "error": { "code", "message", "details"? } }`. Weft's own errors carry their
 * code and status; a malformed body or a schema violation is a 400 naming the field; anything else is a
 * 500 whose details stay in the server log.
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
      const first = fe.validation[0];
      const field = first
        ? `${first.instancePath || '(body)'}`.replace(/^\//, '').replaceAll('/', '.') || 'body'
        : 'body';
      const message = first
        ? `${fe.validationContext ?? 'body'} ${field === 'body' ? '' : `field "${field}" `}${first.message}`
        : fe.message;
      return reply
        .status(400)
        .send({ error: { code: 'bad_request', message: message.replace(/\s+/g, ' ').trim() } });
    }
    if (fe.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
      return reply.status(415).send({
        error: {
          code: 'unsupported_media_type',
          message: `send JSON (or YAML to /v1/definitions), not ${request.headers['content-type']}`,
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
