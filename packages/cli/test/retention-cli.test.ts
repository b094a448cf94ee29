import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { TEST_ADMIN_KEY } from '@weft/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../server/test/helpers.js';

// Retention, purges, archived runs and search attributes, as a user runs them: separate `weft` processes
// against a real server.

const BIN = fileURLToPath(new URL('../bin/weft.js', import.meta.url));
const exec = promisify(execFile);

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t?.close();
});

async function weft(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  try {
    const { stdout, stderr } = await exec(process.execPath, [BIN, ...args], {
      env: { ...process.env, NO_COLOR: '1', WEFT_URL: t.url, USER: 'tester', WEFT_API_KEY: TEST_ADMIN_KEY },
    });
    return { code: 0, out: stdout, err: stderr };
  } catch (e) {
    const x = e as { code: number; stdout: string; stderr: string };
    return { code: x.code, out: x.stdout, err: x.stderr };
  }
}

/** Waits (at most `ms`) until `check` gives something, and returns it. */
async function until<T>(check: () => Promise<T | null | undefined | false>, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('weft retention, runs purge and --attr', { timeout: 240_000 }, () => {
  it('tags runs at start and finds them; purges a run (a dry run first) and shows it from its archive', async () => {
    const file = join(tmpdir(), `weft-retention-${process.pid}.yaml`);
    await writeFile(file, `name: cli-kept\nnodes:\n  - { id: t, kind: transform, value: "input" }\n`);
    expect((await weft('deploy', file)).code).toBe(0);
    const id = (await weft('start', 'cli-kept', '--input', '{"n":1}', '--attr', 'customer=42')).out.match(
      /started run (\S+)/,
    )![1]!;
    await until(async () => (await t.call('GET', `/v1/runs/${id}`)).body.status === 'completed');
    expect((await weft('runs', 'list', '--attr', 'customer=42')).out).toContain(id);
    expect((await weft('runs', 'list', '--attr', 'customer=43')).out).toContain('no runs');

    const set = await weft('retention', 'set', '30d', '--definition', 'cli-kept', '--archive');
    expect(set.out).toContain('finished runs of cli-kept are kept 30d');
    expect((await weft('retention', 'show')).out).toMatch(/cli-kept\s+30d\s+yes/);

    const before = new Date(Date.now() + 3_600_000).toISOString();
    const dry = await weft('runs', 'purge', '--before', before, '--definition', 'cli-kept', '--dry-run');
    expect(dry.out).toContain('1 finished runs would be purged');
    expect(dry.out).toContain('0 blobs of purged runs wait to be deleted from the blob store');
    expect((await weft('runs', 'purge', '--before', before, '--definition', 'cli-kept')).out).toContain(
      'purged 1',
    );
    const shown = await weft('runs', 'show', id);
    expect(shown.code).toBe(0);
    expect(shown.out).toContain('read from the archive');
    expect((await weft('retention', 'clear', '--definition', 'cli-kept')).out).toContain('cleared');

    const bad = await weft('runs', 'purge', '--before', 'yesterday');
    expect(bad.code).toBe(1);
    expect(bad.err).toContain('not a time');
  });
});
