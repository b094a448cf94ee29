import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { TEST_ADMIN_KEY, TEST_ADMIN_NAME } from '@weft/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../server/test/helpers.js';

// The operator commands, run as a user runs them: a separate `weft` process against a real server.

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

// Each test runs several real `weft` processes one after another; on a loaded machine each can take
// seconds to start, so the bound is wider than the suite's 60 s.
describe('weft operator commands', { timeout: 240_000 }, () => {
  let id = '';

  it('pause, resume, finish a task by hand, terminate: with --reason, and errors that name the state', async () => {
    const file = join(tmpdir(), `weft-ops-${process.pid}.yaml`);
    await writeFile(
      file,
      'name: cli-ops\nnodes:\n  - { id: a, task_type: cli.a }\n  - { id: b, task_type: cli.b }\nedges:\n  - { from: a, to: b }\n',
    );
    expect((await weft('deploy', file)).code).toBe(0);
    id = (await weft('start', 'cli-ops')).out.match(/started run (\S+)/)![1]!;

    expect((await weft('pause', id, '--reason', 'looking into it')).out).toMatch(`run ${id} is paused`);
    const again = await weft('pause', id);
    expect(again.code).toBe(4);
    expect(again.err).toMatch(`error: run ${id} is paused; only a running run can be paused`);
    expect((await weft('resume', id)).out).toMatch('is running');
    expect(
      (await weft('task', 'complete', id, 'a', '--output', '{"n":1}', '--reason', 'by phone')).code,
    ).toBe(0);
    expect((await weft('task', 'complete', id, 'a', '--output', 'nope')).err).toMatch(
      /--output is not valid JSON/,
    );
    expect((await weft('terminate', id)).err).toMatch(/required option '--reason <text>'/);
    expect((await weft('terminate', id, '--reason', 'wrong customer')).out).toMatch('is terminated');
  });

  it('history page by page, and watch until the run has finished', async () => {
    const history = await weft('runs', 'history', id, '--all');
    expect(history.code).toBe(0);
    for (const type of ['run.paused', 'run.resumed', 'task.completed_by_operator', 'run.terminated'])
      expect(history.out).toContain(type);
    // The key's name, with the command's own note beside it.
    expect(history.out).toContain(`"by":"${TEST_ADMIN_NAME} (for cli:tester)"`);

    // Not a terminal: every event as a line, then the nodes; it ends because the run has finished.
    const watched = await weft('runs', 'watch', id);
    // The run did not complete: the exit code says so.
    expect(watched.code).toBe(6);
    expect(watched.out).toMatch(/run\.terminated/);
    expect(watched.out).toMatch(/NODE\s+ATTEMPT\s+STATUS/);
    expect(watched.out).toMatch(`run ${id} is terminated`);
  });

  it('retry, and bulk with a dry run, a summary and refusals', async () => {
    expect((await weft('retry', id)).out).toMatch('is running');
    const dry = await weft('bulk', 'cancel', '--definition', 'cli-ops', '--dry-run');
    expect(dry.out).toContain(id);
    expect(dry.out).toMatch('1 run(s) would be cancelled');
    const bulk = await weft('bulk', 'terminate', '--definition', 'cli-ops', '--reason', 'bad deploy');
    expect(bulk.out).toMatch('1 matched: 1 terminated, 0 refused');
    const refused = await weft('bulk', 'cancel', '--definition', 'cli-ops', '--batch-size', '5');
    expect(refused.out).toMatch('1 matched: 0 cancelled, 1 refused');
    expect(refused.out).toMatch(`${id}  run_not_active`);
  });
});
