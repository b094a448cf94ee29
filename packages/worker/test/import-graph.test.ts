import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

// What a worker process loads by importing the worker SDK (the built package, in a child process of its
// own): none of the heavy modules a worker has no use for. Each costs megabytes of memory in every
// worker process; OpenTelemetry's API is loaded only once something registered a tracer.

const PROBE = fileURLToPath(new URL('./fixtures/loaded-modules.mjs', import.meta.url));

const HEAVY: Record<string, RegExp> = {
  undici: /\/node_modules\/undici\//,
  'the OpenTelemetry API or SDK': /\/node_modules\/@opentelemetry\//,
  'the engine': /\/packages\/engine\/|\/node_modules\/@weft\/engine\//,
  'the server': /\/packages\/server\/|\/node_modules\/@weft\/server\//,
  fastify: /\/node_modules\/fastify\//,
  pino: /\/node_modules\/pino\//,
  'the PostgreSQL driver': /\/node_modules\/postgres\//,
  ioredis: /\/node_modules\/ioredis\//,
};

/** The modules importing `specifier` loads, in a fresh Node process. */
async function loadedBy(specifier: string): Promise<string[]> {
  const { stdout } = await promisify(execFile)(process.execPath, [PROBE, specifier]);
  return JSON.parse(stdout) as string[];
}

/** Which of the heavy modules are among `loaded`. */
function heavyIn(loaded: string[]): string[] {
  return Object.keys(HEAVY).filter((name) => loaded.some((url) => HEAVY[name]!.test(url)));
}

describe("the worker SDK's import graph", () => {
  it('loads none of the heavy modules', async () => {
    const loaded = await loadedBy('@weft/worker');
    expect(loaded.some((url) => url.endsWith('/packages/worker/dist/index.js'))).toBe(true);
    expect(heavyIn(loaded)).toEqual([]);
  });

  it('is listed by a probe that sees them: the full client loads undici', async () => {
    expect(heavyIn(await loadedBy('@weft/client'))).toContain('undici');
  });
});
