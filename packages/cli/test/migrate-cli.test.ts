import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { TEST_ADMIN_KEY } from '@weft/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../server/test/helpers.js';

// `weft runs migrate`, run as a user runs it: a separate `weft` process against a real server.

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

describe('weft runs migrate', { timeout: 240_000 }, () => {
  it('plans, changing nothing, then moves the runs that can move', async () => {
    const v1 = join(tmpdir(), `weft-move-1-${process.pid}.yaml`);
    const v2 = join(tmpdir(), `weft-move-2-${process.pid}.yaml`);
    await writeFile(
      v1,
      'name: cli-move\nnodes:\n  - { id: a, task_type: cli.move }\n  - { id: b, task_type: cli.move }\nedges:\n  - { from: a, to: b }\n',
    );
    await writeFile(
      v2,
      'name: cli-move\nnodes:\n  - { id: a, task_type: cli.move }\n  - { id: b2, task_type: cli.move }\nedges:\n  - { from: a, to: b2 }\n',
    );
    expect((await weft('deploy', v1)).code).toBe(0);
    const id = (await weft('start', 'cli-move')).out.match(/started run (\S+)/)![1]!;
    expect((await weft('deploy', v2)).code).toBe(0);

    const neither = await weft('runs', 'migrate', 'cli-move', '--to', '2');
    expect(neither.code).toBe(1);
    expect(neither.err).toMatch(/say --plan \(change nothing\) or --apply/);

    const plan = await weft(
      'runs',
      'migrate',
      'cli-move',
      '--to',
      '2',
      '--from',
      '1',
      '--map',
      'b=b2',
      '--plan',
    );
    expect(plan.code).toBe(0);
    expect(plan.out).toContain(`${id}  can move`);
    expect(plan.out).toMatch(/1 run\(s\) can move to version 2, 0 cannot/);

    const apply = await weft(
      'runs',
      'migrate',
      'cli-move',
      '--to',
      '2',
      '--run',
      id,
      '--map',
      'b=b2',
      '--apply',
      '--reason',
      'new flow',
    );
    expect(apply.code).toBe(0);
    expect(apply.out).toMatch(/1 moved to version 2, 0 stayed/);
    const again = await weft('runs', 'migrate', 'cli-move', '--to', '2', '--run', id, '--plan');
    expect(again.out).toContain(`${id}  stays  the run is on version 2 already`);

    const fork = await weft('runs', 'fork', id, '--input', '{"k":1}', '--version', '1');
    expect(fork.code).toBe(0);
    const forked = fork.out.match(/forked run (\S+) from/)![1]!;
    expect(fork.out).toContain('(version 1, running)');
    const links = await weft('runs', 'forks', id);
    expect(links.out).toContain(`forks: ${forked}`);
    const refused = await weft('runs', 'fork', id, '--up-to', 'b2');
    expect(refused.code).toBe(4);
    expect(refused.err).toMatch(/node "b2" is not reached in run/);
  });
});
