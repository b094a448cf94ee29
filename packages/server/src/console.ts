import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';

/**
 * Where the web console's built assets are (`packages/console/dist`, made by `npm run build`), or null
 * when they have not been built.
 */
export function consoleAssetsDir(): string | null {
  let packageJson: string;
  try {
    packageJson = createRequire(import.meta.url).resolve('@weft/console/package.json');
  } catch {
    return null;
  }
  const dir = join(dirname(packageJson), 'dist');
  return existsSync(join(dir, 'index.html')) ? dir : null;
}

/**
 * Serves the web console at `/` from `dir`. Files are registered one route each (no wildcard), so every
 * API route keeps its priority; the console's own paths (`/runs/…`) fall back to index.html through
 * `consoleFallback`. Hashed assets are cached for good; index.html is checked on every load, so a new
 * build shows at once.
 */
export function serveConsole(app: FastifyInstance, dir: string): void {
  // Loaded with the server, not with every command of the CLI that imports this package.
  app.register(import('@fastify/static'), {
    root: dir,
    prefix: '/',
    wildcard: false,
    index: ['index.html'],
    // The headers are set here, not by the plugin's max-age option, which would give index.html one too.
    cacheControl: false,
    setHeaders(res, path) {
      res.setHeader(
        'cache-control',
        path.includes(`${join(dir, 'assets')}`) ? 'public, max-age=31536000, immutable' : 'no-cache',
      );
    },
  });
}

/**
 * For a request no route matched: true when it is a page of the console (a GET or HEAD for HTML outside
 * the API's paths), which is then answered with index.html; the console's router shows the page.
 */
export function isConsolePage(request: FastifyRequest): boolean {
  if (request.method !== 'GET' && request.method !== 'HEAD') return false;
  const path = request.url.split('?')[0] ?? '';
  if (path.startsWith('/v1/') || path === '/v1' || path === '/metrics' || path.startsWith('/assets/'))
    return false;
  return (request.headers.accept ?? '').includes('text/html');
}

/** Answers with the console's index.html. */
export function sendConsoleIndex(reply: FastifyReply): FastifyReply {
  return reply.header('cache-control', 'no-cache').type('text/html; charset=utf-8').sendFile('index.html');
}

/** True for a route serving one of the console's files (the static plugin marks them with `config.file`). */
export function isConsoleFile(route: RouteOptions): boolean {
  return typeof (route.config as { file?: unknown } | undefined)?.file === 'string';
}
