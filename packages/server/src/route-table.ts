import type { FastifyInstance, RouteOptions } from 'fastify';

/** One route of the HTTP API, with the JSON schemas its requests are checked against. */
export interface RouteInfo {
  readonly method: string;
  /** The path as Fastify has it: `/v1/runs/:id`. */
  readonly url: string;
  /** `body`, `querystring`, `params` and `headers` schemas, when the route has them. */
  readonly schema: Readonly<Record<string, unknown>>;
}

const tables = new WeakMap<FastifyInstance, RouteInfo[]>();

/** Records every route added to `app` from now on (call it before adding any). */
export function recordRoutes(app: FastifyInstance): void {
  const routes: RouteInfo[] = [];
  tables.set(app, routes);
  app.addHook('onRoute', (route: RouteOptions) => {
    for (const method of [route.method].flat()) {
      if (method === 'HEAD') continue;
      routes.push({ method, url: route.url, schema: (route.schema ?? {}) as Record<string, unknown> });
    }
  });
}

/**
 * The routes of an app built by `buildApp`, with their schemas: what a tool that generates requests (the
 * HTTP fuzz test) or documentation reads.
 */
export function routesOf(app: FastifyInstance): readonly RouteInfo[] {
  return tables.get(app) ?? [];
}
