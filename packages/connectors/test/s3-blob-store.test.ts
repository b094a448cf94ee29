import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { S3BlobStore, signS3Request } from '@weft/connectors';
import { PayloadStore } from '@weft/engine/internal';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The S3 blob store against a local fake of the S3 API (no S3 server is reachable here): path-style
// URLs, AWS Signature Version 4 headers, the body's hash, and 404 as "no such blob". The signer itself is
// checked against the example AWS publishes for Signature Version 4 (GET Object, in the S3 API reference
// "Signature Calculations for the Authorization Header: Transferring Payload in a Single Chunk").

const SIGNED_AT = new Date('2013-05-24T00:00:00Z');

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

let server: Server;
let endpoint: string;
const objects = new Map<string, Buffer>();
const seen: Seen[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      if (req.method === 'PUT') {
        objects.set(req.url!, body);
        res.writeHead(200).end();
      } else if (req.method === 'DELETE') {
        // S3 answers 204 whether or not the key was there; a key under `denied/` is refused, as without the
        // s3:DeleteObject permission.
        if (req.url!.includes('/denied/')) res.writeHead(403).end('<Error><Code>AccessDenied</Code></Error>');
        else {
          objects.delete(req.url!);
          res.writeHead(204).end();
        }
      } else if (req.method === 'HEAD') {
        res.writeHead(objects.has(req.url!) ? 200 : 404).end();
      } else {
        const found = objects.get(req.url!);
        if (found) res.writeHead(200).end(found);
        else res.writeHead(404).end('<Error><Code>NoSuchKey</Code></Error>');
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
});

describe('S3 request signature', () => {
  it("reproduces AWS's published Signature Version 4 example (GET Object with a Range)", () => {
    const headers = signS3Request(
      {
        method: 'GET',
        host: 'examplebucket.s3.amazonaws.com',
        path: '/test.txt',
        headers: { Range: 'bytes=0-9' },
      },
      'us-east-1',
      { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' },
      SIGNED_AT,
    );
    expect(headers['X-Amz-Date']).toBe('20130524T000000Z');
    expect(headers['X-Amz-Content-Sha256']).toBe(
      'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    );
    expect(headers.Authorization).toBe(
      'AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, ' +
        'SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, ' +
        'Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41',
    );
  });
});

describe('S3 blob store', () => {
  const credentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' };
  const store = () =>
    new S3BlobStore({
      bucket: 'weft-test',
      prefix: 'blobs/',
      region: 'eu-west-1',
      endpoint,
      ...credentials,
      clock: () => SIGNED_AT,
    });

  it('signs each request as the server received it, at the time its clock says', async () => {
    const data = Buffer.from('{"signed":true}');
    await store().put('signed', data);
    const put = seen.at(-1)!;
    expect(put.headers['x-amz-date']).toBe('20130524T000000Z');
    // The signature, computed again over what arrived (host and port, path, content type, body).
    const expected = signS3Request(
      {
        method: put.method,
        host: put.headers.host!,
        path: put.url,
        headers: { 'content-type': put.headers['content-type'] as string },
        body: put.body,
      },
      'eu-west-1',
      credentials,
      SIGNED_AT,
    );
    expect(put.headers.authorization).toBe(expected.Authorization);
  });

  it('puts a blob with a signed, path-style request and gets it back', async () => {
    const s3 = store();
    const data = Buffer.from('{"hello":"world"}');
    await s3.put('abc123', data);
    const put = seen.at(-1)!;
    expect(put.method).toBe('PUT');
    expect(put.url).toBe('/weft-test/blobs/abc123');
    expect(put.headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/20130524\/eu-west-1\/s3\/aws4_request, SignedHeaders=[a-z0-9;-]*host[a-z0-9;-]*, Signature=[0-9a-f]{64}$/,
    );
    expect(put.headers['x-amz-content-sha256']).toBe(createHash('sha256').update(data).digest('hex'));
    expect(put.headers['x-amz-date']).toBe('20130524T000000Z');
    expect((await s3.get('abc123'))?.toString()).toBe('{"hello":"world"}');
    expect(seen.at(-1)!.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 /);
  });

  it('says there is no blob on 404', async () => {
    expect(await store().get('missing')).toBeNull();
  });

  it('tells whether it has a blob (HEAD) and deletes one (DELETE), signed; a refused delete throws', async () => {
    const s3 = store();
    await s3.put('gone-soon', Buffer.from('{"a":1}'));
    expect(await s3.has('gone-soon')).toBe(true);
    expect(seen.at(-1)!.method).toBe('HEAD');
    await s3.delete('gone-soon');
    const del = seen.at(-1)!;
    expect(del.method).toBe('DELETE');
    expect(del.url).toBe('/weft-test/blobs/gone-soon');
    expect(del.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 /);
    expect(await s3.has('gone-soon')).toBe(false);
    // Deleting what is not there succeeds, as S3 does.
    await s3.delete('gone-soon');
    await expect(s3.delete('denied/x')).rejects.toThrow(/S3 DELETE of blob denied\/x failed: HTTP 403/);
  });

  it('serves as the payload store', async () => {
    const payloads = new PayloadStore(store(), { thresholdBytes: 100, maxBytes: 10_000 });
    const value = { text: 'p'.repeat(500) };
    const ref = await payloads.offload(value, 'a test value');
    expect(payloads.isRef(ref)).toBe(true);
    const fresh = new PayloadStore(store(), { thresholdBytes: 100, maxBytes: 10_000 });
    expect(await fresh.resolve(ref)).toEqual(value);
  });
});
