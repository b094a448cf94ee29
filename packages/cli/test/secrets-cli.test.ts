import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { TEST_ADMIN_KEY } from '@weft/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../server/test/helpers.js';

const BIN = fileURLToPath(new URL('../bin/weft.js', import.meta.url));

/** Runs `weft` with `stdin` piped in; resolves with its exit code and output. */
function weft(args: string[], stdin = ''): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { ...process.env, NO_COLOR: '1', WEFT_API_KEY: TEST_ADMIN_KEY },
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (err += c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, out, err }));
    child.stdin.end(stdin);
  });
}

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({}, { secretsKey: randomBytes(32).toString('base64') });
});
afterAll(async () => {
  await t?.close();
});

// Each command is a process of its own; five of them on a slow machine take a while.
describe('weft secrets', () => {
  it('sets a secret from standard input or --value, lists names only, and deletes', async () => {
    const value = `piped-${randomBytes(8).toString('hex')}`;
    const set = await weft(['secrets', 'set', 'PIPED', '--url', t.url], `${value}\n`);
    expect(set).toMatchObject({ code: 0 });
    expect(set.out).toContain('set secret PIPED in namespace default');
    expect((await weft(['secrets', 'set', 'FLAGGED', '--value', 'v4lue', '--url', t.url])).code).toBe(0);
    const list = await weft(['secrets', 'list', '--url', t.url]);
    expect(list.code).toBe(0);
    expect(list.out).toMatch(/FLAGGED[\s\S]*PIPED/);
    expect(list.out).not.toContain(value);
    expect((await weft(['secrets', 'delete', 'PIPED', '--url', t.url])).code).toBe(0);
    const again = await weft(['secrets', 'delete', 'PIPED', '--url', t.url]);
    expect(again.code).not.toBe(0);
    expect(again.err).toContain('secret "PIPED" is not set in namespace "default"');
  }, 180_000);
});
