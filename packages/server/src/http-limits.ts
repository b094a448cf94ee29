import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/**
 * The answers to requests refused before any route sees them (a URL too long, a request Node's HTTP parser
 * cannot read, a path segment Fastify cannot decode) are JSON `{error: {code, message}}` like every other.
 */

/** Longest URL (path and query string) a route is asked to handle. */
export const MAX_URL_BYTES = 8 * 1024;
/** Longest path segment a route parameter takes (Fastify's `maxParamLength`). */
export const MAX_PARAM_LENGTH = 500;

/** What Node's HTTP server reports of a request it could not read. */
type ClientError = Error & { code?: string; rawPacket?: unknown };

const URL_TOO_LONG = {
  code: 'url_too_long',
  message: `the URL is longer than ${MAX_URL_BYTES} bytes: send long values in a request body instead`,
};

/** Refuses a URL over MAX_URL_BYTES with a 414, before routing. */
export function installUrlLimit(app: FastifyInstance): void {
  // Callback style: no promise per request for a check that nearly always passes.
  app.addHook('onRequest', (request, reply, done) => {
    // A URL's bytes are at least its length and at most three times it: measure only when it matters.
    const url = request.url;
    if (url.length * 3 <= MAX_URL_BYTES || Buffer.byteLength(url) <= MAX_URL_BYTES) return done();
    reply.status(414).send({ error: URL_TOO_LONG });
  });
}

/** Fastify's `frameworkErrors`: a path it cannot decode, or a path segment over MAX_PARAM_LENGTH. */
export function frameworkErrors(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    reply.status(414).send({
      error: {
        code: 'url_too_long',
        message: `a part of the path is longer than ${MAX_PARAM_LENGTH} characters: no name or id is that long`,
      },
    });
    return;
  }
  reply.status(400).send({
    error: {
      code: 'bad_url',
      message: 'the URL is not valid: percent-encode the characters of each path part',
    },
  });
}

/**
 * Fastify's `clientErrorHandler`: answers a request Node's HTTP parser refused (a request line and headers
 * over 16 KiB, a malformed request, a timeout) on the socket, then closes it.
 */
export function clientErrorHandler(error: ClientError, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, code, message] = refusal(error);
  const body = JSON.stringify({ error: { code, message } });
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `Content-Type: application/json; charset=utf-8\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}

function refusal(error: ClientError): [number, string, string] {
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT')
    return [408, 'request_timeout', 'the request was not received in time: send it again'];
  if (error.code === 'HPE_HEADER_OVERFLOW') {
    // The request line counts against the header limit: a long first line is a long URL.
    const raw = error.rawPacket as unknown;
    const packet = Buffer.isBuffer(raw) ? raw.toString('latin1') : '';
    const lineEnd = packet.indexOf('\r\n');
    if (lineEnd === -1 || lineEnd > MAX_URL_BYTES) return [414, URL_TOO_LONG.code, URL_TOO_LONG.message];
    return [
      431,
      'headers_too_large',
      'the request headers are larger than 16 KiB: send fewer or shorter ones',
    ];
  }
  return [400, 'bad_http', 'the request is not valid HTTP/1.1: check the request line and the headers'];
}
