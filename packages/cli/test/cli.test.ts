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

/** Runs `weft` and returns its exit code and output (never throws on a non-zero exit). */
async function weft(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; out: string; err: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [BIN, ...args], {
      env: { ...process.env, NO_COLOR: '1', WEFT_API_KEY: TEST_ADMIN_KEY, ...env },
    });
    return { code: 0, out: stdout, err: stderr };
  } catch (e) {
    const x = e as { code: number; stdout: string; stderr: string };
    return { code: x.code, out: x.stdout, err: x.stderr };
  }
}

let t: TestServer;
let dir: string;
beforeAll(async () => {
  t = await startTestServer();
  dir = tmpdir();
});
afterAll(async () => {
  await t?.close();
});

// Each test runs several real `weft` processes one after another; on a loaded machine each can take
// seconds to start, so the bound is wider than the suite's 60 s.
describe('weft CLI', { timeout: 240_000 }, () => {
  it('validates offline: exit 0 for a valid file, exit 1 with every problem and its line', async () => {
    const good = join(dir, `weft-good-${process.pid}.yaml`);
    const bad = join(dir, `weft-bad-${process.pid}.yaml`);
    await writeFile(good, 'name: cli\nnodes:\n  - { id: a, task_type: cli.a }\n');
    await writeFile(
      bad,
      'name: cli\nnodes:\n  - id: a\n    task_type: cli.a\n    retries: 2\nedges:\n  - { from: a, to: zz }\n',
    );
    const ok = await weft(['validate', good]);
    expect(ok).toMatchObject({ code: 0 });
    expect(ok.out).toMatch(/valid: cli \(1 nodes, 0 edges\)/);
    const no = await weft(['validate', bad]);
    expect(no.code).toBe(1);
    expect(no.err).toMatch(/has 2 problem\(s\)/);
    expect(no.err).toMatch(/line 5, node "a": .*unknown field "retries".*did you mean "retry"/);
    expect(no.err).toMatch(/line 7: edge a -> zz: there is no node "zz"/);
    const missing = await weft(['validate', '/no/such/file.yaml']);
    expect(missing.code).toBe(1);
    expect(missing.err).toMatch(/cannot read \/no\/such\/file.yaml: no such file/);
  });

  it('has --help on every command and refuses a wrong flag with a message', async () => {
    for (const args of [
      ['--help'],
      ['deploy', '--help'],
      ['runs', 'show', '--help'],
      ['dev', '--help'],
      ['start', '--help'],
    ]) {
      const help = await weft(args);
      expect(help.code).toBe(0);
      expect(help.out).toMatch(/Usage: weft/);
    }
    const wrong = await weft(['runs', 'list', '--colour', 'red']);
    expect(wrong.code).not.toBe(0);
    expect(wrong.err).toMatch(/unknown option '--colour'/);
    const badNumber = await weft(['runs', 'list', '--limit', 'lots']);
    expect(badNumber.code).not.toBe(0);
    expect(badNumber.err).toMatch(/must be a whole number/);
  });

  it('deploys, starts, lists, shows and cancels runs against a server', async () => {
    const file = join(dir, `weft-cli-${process.pid}.yaml`);
    await writeFile(
      file,
      'name: clirun\nnodes:\n  - { id: first, task_type: cli.first }\n  - { id: second, task_type: cli.second }\nedges:\n  - { from: first, to: second }\n',
    );
    const env = { WEFT_URL: t.url };
    expect((await weft(['deploy', file], env)).out).toMatch(/deployed clirun version 1/);
    expect((await weft(['deploy', file], env)).out).toMatch(/clirun version 1 is already deployed/);
    const started = await weft(['start', 'clirun', '--input', '{"order": 9}'], env);
    expect(started.code).toBe(0);
    const id = /started run ([0-9a-f-]{36})/.exec(started.out)![1]!;
    const list = await weft(['runs', 'list', '--definition', 'clirun'], env);
    expect(list.out).toMatch(/RUN\s+DEFINITION\s+STATUS\s+STEPS/);
    expect(list.out).toMatch(/clirun v1\s+\S*running\S*\s+0\/1/);
    expect(list.out).toContain(id);
    const shown = await weft(['runs', 'show', id], env);
    expect(shown.out).toMatch(/status\s+running/);
    expect(shown.out).toMatch(/progress\s+0\/1 steps completed, 1 running, 0 failed/);
    expect(shown.out).toMatch(/NODE\s+ATTEMPT\s+STATUS/);
    expect(shown.out).toMatch(/first\s+1\s+queued\s+cli\.first/);
    const cancelled = await weft(['cancel', id, '--reason', 'testing the CLI'], env);
    expect(cancelled.out).toMatch(/is cancelled/);
    const again = await weft(['cancel', id], env);
    expect(again.code).toBe(4);
    expect(again.err).toMatch(/already cancelled/);
    const badInput = await weft(['start', 'clirun', '--input', '{oops'], env);
    expect(badInput.code).toBe(2);
    expect(badInput.err).toMatch(/--input is not valid JSON/);
  });

  it('prints a run history page by page, and every page with --all', async () => {
    await t.call('POST', '/v1/definitions', 'name: clihist\nnodes:\n  - { id: only, task_type: cli.hist }\n');
    const { id } = (await t.call('POST', '/v1/runs', { definition: 'clihist', input: {} })).body;
    await t.call('POST', `/v1/runs/${id}/cancel`, { reason: 'enough' });
    const { events } = (await t.call('GET', `/v1/runs/${id}/history`)).body as {
      events: { seq: number; type: string }[];
    };
    expect(events.length).toBeGreaterThan(2);
    const env = { WEFT_URL: t.url };
    const lines = (out: string) => out.trimEnd().split('\n');
    // One event a page: the first, then how to get the next.
    const first = await weft(['runs', 'history', id, '--limit', '1'], env);
    expect(first.code).toBe(0);
    expect(lines(first.out)).toHaveLength(2);
    expect(lines(first.out)[0]).toMatch(new RegExp(`^\\s+1  \\S+  ${events[0]!.type}`));
    expect(lines(first.out)[1]).toBe(`more: weft runs history ${id} --after 1`);
    // Every page: each event once, in order, and nothing after the last.
    const all = await weft(['runs', 'history', id, '--limit', '1', '--all'], env);
    expect(all.code).toBe(0);
    expect(lines(all.out).map((l) => Number(l.trim().split(/\s+/)[0]))).toEqual(events.map((e) => e.seq));
    expect(lines(all.out).at(-1)).toContain('run.cancelled');
    const rest = await weft(['runs', 'history', id, '--after', String(events.at(-1)!.seq)], env);
    expect(rest).toMatchObject({ code: 0, out: '' });
  });

  it('says clearly when a run does not exist or the server cannot be reached', async () => {
    const unknown = await weft(['runs', 'show', '01900000-0000-7000-8000-000000000042'], { WEFT_URL: t.url });
    expect(unknown.code).toBe(3);
    expect(unknown.err).toMatch(/error: there is no run 01900000-0000-7000-8000-000000000042/);
    const down = await weft(['runs', 'list'], { WEFT_URL: 'http://127.0.0.1:9' });
    expect(down.code).toBe(5);
    expect(down.err).toMatch(/cannot reach the Weft server at http:\/\/127.0.0.1:9/);
  });
});
