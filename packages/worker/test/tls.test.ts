import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WeftClient } from '@weft/client';
import { TEST_ADMIN_KEY } from '@weft/testing';
import { Worker } from '@weft/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../server/test/helpers.js';

// The server serves HTTPS with a certificate made here by a throwaway CA, and asks clients for a certificate
// of that CA (mutual TLS); a client and a worker that trust the CA and hold a client certificate work a run
// through; without the client certificate, or without trusting the CA, they are refused.

function hasOpenssl(): boolean {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
const OPENSSL = hasOpenssl();
if (!OPENSSL) console.warn('tls.test.ts: skipped, the openssl command is not installed');

/** A CA, a server certificate for 127.0.0.1 and a client certificate, as PEM files in a new folder. */
function makeCertificates(): Record<'ca' | 'serverCert' | 'serverKey' | 'clientCert' | 'clientKey', string> {
  const dir = mkdtempSync(join(tmpdir(), 'weft-tls-'));
  const f = (name: string) => join(dir, name);
  const ssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  ssl(
    'req',
    '-x509',
    ...ec,
    '-keyout',
    'ca.key',
    '-out',
    'ca.crt',
    '-days',
    '2',
    '-subj',
    '/CN=weft test CA',
  );
  writeFileSync(f('server.ext'), 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n');
  writeFileSync(f('client.ext'), 'extendedKeyUsage=clientAuth\n');
  for (const who of ['server', 'client']) {
    ssl('req', ...ec, '-keyout', `${who}.key`, '-out', `${who}.csr`, '-subj', `/CN=weft test ${who}`);
    ssl(
      'x509',
      '-req',
      '-in',
      `${who}.csr`,
      '-CA',
      'ca.crt',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-out',
      `${who}.crt`,
      '-days',
      '2',
      '-extfile',
      `${who}.ext`,
    );
  }
  return {
    ca: f('ca.crt'),
    serverCert: f('server.crt'),
    serverKey: f('server.key'),
    clientCert: f('client.crt'),
    clientKey: f('client.key'),
  };
}

let t: TestServer;
let files: ReturnType<typeof makeCertificates>;
beforeAll(async () => {
  if (!OPENSSL) return;
  files = makeCertificates();
  t = await startTestServer(
    {},
    { tls: { certFile: files.serverCert, keyFile: files.serverKey, clientCaFile: files.ca } },
  );
});
afterAll(async () => {
  await t?.close();
});

describe.skipIf(!OPENSSL)('TLS', () => {
  it('a client and a worker work a run through over mutual TLS', async () => {
    expect(t.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const tls = { caFile: files.ca, certFile: files.clientCert, keyFile: files.clientKey };
    const client = new WeftClient({ url: t.url, apiKey: TEST_ADMIN_KEY, tls });
    const worker = new Worker({
      url: t.url,
      apiKey: TEST_ADMIN_KEY,
      tls,
      handlers: { 'tls.work': (input) => ({ seen: input }) },
    });
    try {
      await client.deploy(
        'name: over-tls\nnodes:\n  - { id: a, task_type: tls.work, input: { n: input.n } }\n',
      );
      const run = await client.startRun('over-tls', { n: 7 });
      await worker.start();
      let status = 'running';
      let output: unknown;
      for (let i = 0; i < 200 && status === 'running'; i++) {
        const r = await client.getRun(run.id);
        status = r.status;
        output = r.output;
        if (status === 'running') await new Promise((res) => setTimeout(res, 50));
      }
      expect(status).toBe('completed');
      expect(output).toEqual({ a: { seen: { n: 7 } } });
    } finally {
      await worker.stop();
      await client.close();
    }
  });

  it('refuses a client without a client certificate, and a client that does not trust the CA', async () => {
    const noCert = new WeftClient({ url: t.url, apiKey: TEST_ADMIN_KEY, tls: { caFile: files.ca } });
    const noCa = new WeftClient({
      url: t.url,
      apiKey: TEST_ADMIN_KEY,
      tls: { certFile: files.clientCert, keyFile: files.clientKey },
    });
    try {
      await expect(noCert.listDeadLetters()).rejects.toMatchObject({ code: 'unreachable' });
      await expect(noCa.listDeadLetters()).rejects.toMatchObject({
        message: expect.stringMatching(/certificate is not trusted: set WEFT_CA_FILE/),
      });
    } finally {
      await noCert.close();
      await noCa.close();
    }
  });
});
