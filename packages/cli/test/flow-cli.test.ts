import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { TEST_ADMIN_KEY } from '@weft/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../server/test/helpers.js';

const BIN = fileURLToPath(new URL('../bin/weft.js', import.meta.url));
const run = promisify(execFile);

async function weft(args: string[]): Promise<{ code: number; out: string; err: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [BIN, ...args], {
      env: {
        ...process.env,
        NO_COLOR: '1',
        WEFT_URL: t.url,
        WEFT_USER: 'cli-user',
        WEFT_API_KEY: TEST_ADMIN_KEY,
      },
    });
    return { code: 0, out: stdout, err: stderr };
  } catch (e) {
    const x = e as { code: number; stdout: string; stderr: string };
    return { code: x.code, out: x.stdout, err: x.stderr };
  }
}

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
  const file = join(tmpdir(), `weft-flow-${process.pid}.yaml`);
  await writeFile(
    file,
    'name: review\nnodes:\n  - { id: look, kind: human, title: Look at it, form: { type: object, required: [fine] } }\n',
  );
  expect((await weft(['deploy', file])).code).toBe(0);
});
afterAll(async () => {
  await t?.close();
});

// Each test runs several real `weft` processes one after another; on a loaded machine each can take
// seconds to start, so the bound is wider than the suite's 60 s.
describe('weft CLI: flow control', { timeout: 240_000 }, () => {
  it('starts idempotently', { timeout: 120_000 }, async () => {
    const first = await weft(['start', 'review', '--idempotency-key', 'k-1']);
    expect(first.out).toMatch(/^started run (\S+) of review v1/);
    const id = /run (\S+)/.exec(first.out)![1];
    const again = await weft(['start', 'review', '--idempotency-key', 'k-1']);
    expect(again.out).toBe(`run ${id} of review v1 was already started with this key\n`);
  });

  it('works the inbox: list, claim, complete', { timeout: 120_000 }, async () => {
    let list = { code: 0, out: '', err: '' };
    for (let i = 0; i < 50; i++) {
      list = await weft(['inbox']);
      if (/Look at it/.test(list.out)) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(list.out).toMatch(/TASK +TITLE/);
    const id = /^([0-9a-f-]{36}) +Look at it/m.exec(list.out)![1]!;
    expect((await weft(['inbox', 'claim', id])).out).toMatch(/claimed "Look at it" for cli-user/);
    expect((await weft(['inbox', 'show', id])).out).toMatch(/claimed by: cli-user/);
    const bad = await weft(['inbox', 'complete', id, '--data', '{}']);
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/does not match the form/);
    expect((await weft(['inbox', 'complete', id, '--data', '{"fine": true}'])).out).toMatch(
      /completed "Look at it"/,
    );
    expect((await weft(['inbox', 'list', '--state', 'completed'])).out).toMatch(/Look at it/);
  });

  it('sets, lists and lifts limits', { timeout: 120_000 }, async () => {
    expect((await weft(['limits', 'set', 'semaphore', 'db', '4'])).out).toMatch(/semaphore db: at most 4/);
    expect((await weft(['limits', 'set', 'rate', 'mail', '10', '--per', '1m'])).out).toMatch(
      /rate mail: at most 10 per 1m/,
    );
    expect((await weft(['limits'])).out).toMatch(/semaphore +db +4/);
    expect((await weft(['limits', 'delete', 'semaphore', 'db'])).out).toMatch(
      /lifted the semaphore limit db/,
    );
  });

  it('sets, pauses and lists schedules', { timeout: 120_000 }, async () => {
    const set = await weft([
      'schedules',
      'set',
      'daily',
      '--definition',
      'review',
      '--cron',
      '0 9 * * 1-5',
      '--timezone',
      'Europe/Paris',
    ]);
    expect(set.out).toMatch(/schedule daily: 0 9 \* \* 1-5 \(Europe\/Paris\)/);
    expect((await weft(['schedules', 'pause', 'daily'])).out).toMatch(/is paused/);
    expect((await weft(['schedules'])).out).toMatch(/daily \(paused\) +review/);
  });

  it('shows the sweeper and runs a round', { timeout: 120_000 }, async () => {
    expect((await weft(['sweep'])).out).toMatch(/repaired 0/);
    expect((await weft(['sweep', '--now', '--idle', '10m'])).out).toMatch(/no stuck runs/);
  });
});
