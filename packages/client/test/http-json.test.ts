import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HttpJson, WeftApiError } from '@weft/client/tasks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The worker protocol's transport over Node's own HTTP: what each kind of answer becomes, on a stand-in
// server whose answers the test chooses (the worker tests run it against a real Weft server).

let server: Server;
let url: string;
const seen: { headers: Record<string, unknown>; body: string }[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => {
      body += c.toString('utf8');
    });
    req.on('end', () => {
      seen.push({ headers: req.headers, body });
      const answer: Record<string, [number, string]> = {
        '/ok': [200, body || '{"empty":true}'],
        '/refused': [409, '{"error":{"code":"lease_lost","message":"the lease is gone","details":{"x":1}}}'],
        '/page': [502, '<html>bad gateway</html>'],
        '/html': [200, '<html>not weft</html>'],
      };
      const [status, text] = answer[req.url ?? ''] ?? [404, ''];
      if (req.url === '/slow') return; // never answers
      res.writeHead(status, { 'content-type': 'application/json' }).end(text);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

describe('HttpJson', () => {
  it('sends JSON with the namespace and key, and parses the answer', async () => {
    const http = new HttpJson({ url, namespace: 'team-a', apiKey: 'k1' });
    const body = { text: 'ünïcode ✓', n: [1, 2] };
    expect(await http.call('POST', '/ok', body)).toEqual(body);
    const last = seen.at(-1)!;
    expect(last.headers).toMatchObject({
      'x-weft-namespace': 'team-a',
      authorization: 'Bearer k1',
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(JSON.stringify(body))),
    });
    expect(await http.call('GET', '/ok')).toEqual({ empty: true });
    await http.close();
  });

  it("turns an error answer into WeftApiError with the server's code and message", async () => {
    const http = new HttpJson({ url });
    const e = await http.call('POST', '/refused', {}).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(WeftApiError);
    expect(e).toMatchObject({
      status: 409,
      code: 'lease_lost',
      message: 'the lease is gone',
      details: { x: 1 },
    });
    await expect(http.call('GET', '/page')).rejects.toMatchObject({ status: 502, code: 'http_error' });
    await expect(http.call('GET', '/html')).rejects.toMatchObject({ status: 200, code: 'not_json' });
    await http.close();
  });

  it('says a server that is not there, or a request aborted, is unreachable', async () => {
    const gone = new HttpJson({ url: 'http://127.0.0.1:1' });
    await expect(gone.call('GET', '/ok')).rejects.toMatchObject({ status: 0, code: 'unreachable' });
    const http = new HttpJson({ url });
    await expect(http.call('GET', '/slow', undefined, AbortSignal.timeout(200))).rejects.toMatchObject({
      status: 0,
      code: 'unreachable',
    });
    await http.close();
  });
});
