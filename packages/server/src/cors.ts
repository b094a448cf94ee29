import type { FastifyInstance } from 'fastify';

/**
 * Cross-origin requests from web pages: refused by browsers unless the origin is one of `origins`
 * (`WEFT_CORS_ORIGINS`); with none, no page of another origin may read or write through a browser. A
 * preflight (OPTIONS) from an allowed origin is answered here, before routing. Only JSON and
 * `application/yaml` bodies are taken, so every write from a page needs a preflight (see app.ts).
 */
export function installCors(app: FastifyInstance, origins: readonly string[]): void {
  if (origins.length === 0) return;
  const allowed = new Set(origins.map((o) => o.replace(/\/+$/, '')));
  app.addHook('onRequest', async (request, reply) => {
    const origin = request.headers.origin;
    if (!origin || !(allowed.has(origin) || allowed.has('*'))) return;
    reply.header('access-control-allow-origin', origin).header('vary', 'origin');
    if (request.method !== 'OPTIONS') return;
    return reply
      .status(204)
      .header('access-control-allow-methods', 'GET, POST, PUT, DELETE')
      .header(
        'access-control-allow-headers',
        'authorization, content-type, x-weft-namespace, idempotency-key, last-event-id',
      )
      .header('access-control-max-age', '600')
      .send();
  });
}
