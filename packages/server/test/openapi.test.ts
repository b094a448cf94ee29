import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { ApiClient, RunChangesClient, WeftClient } from '@weft/client';
import { Engine } from '@weft/engine';
import { MemoryStore } from '@weft/memory';
import { buildApp } from '@weft/server';
import { Ajv } from 'ajv';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientCalls } from './openapi-client-calls.js';
import { routeTable } from './route-table.js';

interface Operation {
  parameters?: { in: string; name: string; required?: boolean; schema: object }[];
  requestBody?: { content: Record<string, { schema: object }> };
  responses: Record<string, unknown>;
}
type Document = { openapi: string; paths: Record<string, Record<string, Operation>> };

const committed = fileURLToPath(new URL('../../../docs/reference/openapi.json', import.meta.url));

let app: FastifyInstance;
let served: Document;
beforeAll(async () => {
  // As `npm run docs:openapi` builds it: the in-memory store, no web console.
  app = buildApp({ engine: new Engine({ store: new MemoryStore() }), console: null, auth: { mode: 'off' } });
  const answer = await app.inject({ method: 'GET', url: '/openapi.json' });
  expect(answer.statusCode).toBe(200);
  served = answer.json() as Document;
});
afterAll(async () => {
  await app?.close();
});

/**
 * The document's operation for a request the client made, matching path templates segment by segment; a
 * fixed segment wins over a parameter (`/v1/runs/count` over `/v1/runs/{id}`), as in the server's router.
 */
function operationOf(
  doc: Document,
  method: string,
  path: string,
): { template: string; op: Operation } | null {
  const segments = path.split('/');
  const params = (template: string) => (template.match(/\{/g) ?? []).length;
  const templates = Object.keys(doc.paths).sort((a, b) => params(a) - params(b));
  for (const template of templates) {
    const parts = template.split('/');
    if (parts.length !== segments.length) continue;
    if (!parts.every((p, i) => p.startsWith('{') || p === decodeURIComponent(segments[i]!))) continue;
    const op = doc.paths[template]![method.toLowerCase()];
    if (op) return { template, op };
  }
  return null;
}

describe('the OpenAPI document', () => {
  it('is served at /openapi.json as OpenAPI 3.1 and is the one kept in docs/reference', () => {
    expect(served.openapi).toBe('3.1.0');
    const kept = JSON.parse(readFileSync(committed, 'utf8')) as Document;
    expect(kept, 'docs/reference/openapi.json is stale: run `npm run docs:openapi`').toEqual(served);
  });

  it("has every route of the server's route table, and no other", () => {
    const table = routeTable(app);
    expect(table.length).toBeGreaterThan(40);
    const documented = Object.entries(served.paths)
      .flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`))
      .sort();
    expect(
      table.filter((r) => !documented.includes(r)),
      'routes missing from the document',
    ).toEqual([]);
    expect(
      documented.filter((r) => !table.includes(r)),
      'documented routes the server lacks',
    ).toEqual([]);
    for (const ops of Object.values(served.paths))
      for (const op of Object.values(ops)) expect(Object.keys(op.responses)).toContain('4XX');
  });

  it('asks for a bearer API key everywhere but on the routes that answer without one', () => {
    const doc = served as unknown as {
      components: { securitySchemes: Record<string, unknown> };
      security: unknown[];
      paths: Record<string, Record<string, { security?: unknown[] }>>;
    };
    expect(doc.components.securitySchemes.apiKey).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.security).toEqual([{ apiKey: [] }]);
    const open = Object.entries(doc.paths)
      .flatMap(([path, ops]) =>
        Object.entries(ops)
          .filter(([, op]) => op.security?.length === 0)
          .map(([m]) => `${m.toUpperCase()} ${path}`),
      )
      .sort();
    expect(open).toEqual(['GET /healthz', 'GET /livez', 'GET /openapi.json', 'GET /readyz']);
  });
});

describe('the TypeScript client agrees with the document', () => {
  let recorder: Server;
  let client: WeftClient;
  const requests: { method: string; path: string; query: URLSearchParams; type: string; body: string }[] = [];
  beforeAll(async () => {
    recorder = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        const url = new URL(req.url ?? '/', 'http://x');
        requests.push({
          method: req.method ?? '',
          path: url.pathname,
          query: url.searchParams,
          type: String(req.headers['content-type'] ?? ''),
          body,
        });
        // A completed run is enough of an answer for every method, waiting ones included.
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ id: 'r1', status: 'completed', output: null, tasks: [], items: [] }));
      });
    });
    await new Promise<void>((r) => recorder.listen(0, '127.0.0.1', r));
    client = new WeftClient({ url: `http://127.0.0.1:${(recorder.address() as AddressInfo).port}` });
  });
  afterAll(async () => {
    await client?.close();
    await new Promise((r) => recorder?.close(r));
  });

  it('has a call for every public method of the client', () => {
    const own = (proto: object) =>
      Object.getOwnPropertyNames(proto).filter((n) => n !== 'constructor' && !n.startsWith('_'));
    const methods = [
      ...own(WeftClient.prototype),
      ...own(RunChangesClient.prototype),
      ...own(ApiClient.prototype),
    ].filter(
      // Transport: `close` sends nothing; `events`/`call` are protected and reached through the others.
      (n) => !['close', 'events', 'call'].includes(n),
    );
    expect(methods.filter((m) => !(m in clientCalls)).sort(), 'client methods with no call below').toEqual(
      [],
    );
  });

  it("sends, for every method, a request the document's schemas accept", async () => {
    const ajv = new Ajv({ strict: false, allErrors: true });
    const queryAjv = new Ajv({ strict: false, allErrors: true, coerceTypes: true });
    for (const [name, call] of Object.entries(clientCalls)) {
      const from = requests.length;
      await call(client);
      const sent = requests.slice(from);
      expect(sent.length, `${name} sent no request`).toBeGreaterThan(0);
      for (const r of sent) {
        const found = operationOf(served, r.method, r.path);
        expect(found, `${name}: ${r.method} ${r.path} is not in the document`).not.toBeNull();
        const { op, template } = found!;
        const where = `${name}: ${r.method} ${template}`;
        const query = Object.fromEntries(r.query);
        const allowed = (op.parameters ?? []).filter((p) => p.in === 'query');
        for (const key of Object.keys(query))
          expect(
            allowed.map((p) => p.name),
            `${where} sends query ?${key}`,
          ).toContain(key);
        for (const p of allowed) {
          if (query[p.name] === undefined) continue;
          const holder = { v: query[p.name] };
          const ok = queryAjv.validate({ type: 'object', properties: { v: p.schema } }, holder);
          expect(ok, `${where} ?${p.name}: ${queryAjv.errorsText()}`).toBe(true);
        }
        const content = op.requestBody?.content;
        if (!r.body) {
          expect(op.requestBody === undefined || !('required' in op.requestBody), where).toBe(true);
          continue;
        }
        const schema = content?.[r.type.split(';')[0]!]?.schema ?? content?.['application/json']?.schema;
        if (!r.type.startsWith('application/json')) continue; // YAML: text, no schema
        expect(schema, `${where} takes no JSON body`).toBeDefined();
        const ok = ajv.validate(schema!, JSON.parse(r.body));
        expect(ok, `${where} body ${r.body}: ${ajv.errorsText()}`).toBe(true);
      }
    }
  });
});
