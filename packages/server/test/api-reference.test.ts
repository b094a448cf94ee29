import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Engine } from '@weft/engine';
import { MemoryStore } from '@weft/memory';
import { buildApp } from '@weft/server';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routeTable } from './route-table.js';

const docs = (page: string) =>
  readFileSync(fileURLToPath(new URL(`../../../docs/reference/${page}`, import.meta.url)), 'utf8');

let app: FastifyInstance;
beforeAll(async () => {
  // Without the web console: its files are pages for browsers, not API routes. Without authentication:
  // these tests read the route table and the metrics, not who may call them.
  app = buildApp({ engine: new Engine({ store: new MemoryStore() }), console: null, auth: { mode: 'off' } });
  await app.ready();
});
afterAll(async () => {
  await app?.close();
});

describe('docs/reference/http-api.md', () => {
  it("lists exactly the routes of the server's route table", () => {
    const served = routeTable(app);
    expect(served.length).toBeGreaterThan(40);
    const listed = [...docs('http-api.md').matchAll(/^### (GET|POST|PUT|PATCH|DELETE) (\/\S*)$/gm)]
      .map((m) => `${m[1]} ${m[2]}`)
      .sort();
    expect(
      served.filter((r) => !listed.includes(r)),
      'routes the server has and the page does not list',
    ).toEqual([]);
    expect(
      listed.filter((r) => !served.includes(r)),
      'routes the page lists and the server does not have',
    ).toEqual([]);
    expect(new Set(listed).size, 'routes listed twice').toBe(listed.length);
  });
});

describe('docs/reference/metrics.md', () => {
  it('lists every metric GET /metrics serves, and none it does not', async () => {
    const answer = await app.inject({ method: 'GET', url: '/metrics' });
    expect(answer.statusCode).toBe(200);
    const served = [...answer.body.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]!);
    const page = docs('metrics.md');
    // Node.js process metrics come as two families, described on the page as such.
    const standard = /^(process|nodejs)_/;
    for (const family of ['`process_*`', '`nodejs_*`']) expect(page).toContain(family);
    const own = served.filter((name) => !standard.test(name));
    expect(own.length).toBeGreaterThan(5);
    expect(
      own.filter((name) => !page.includes(`\`${name}\``)),
      'metrics the server serves and the page does not list',
    ).toEqual([]);
    const listed = [...page.matchAll(/^\| `(weft_\w+)`/gm)].map((m) => m[1]!);
    expect(
      listed.filter((name) => !served.includes(name)),
      'metrics the page lists and the server does not serve',
    ).toEqual([]);
  });
});
