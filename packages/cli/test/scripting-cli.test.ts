import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { TEST_ADMIN_KEY } from '@weft/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../server/test/helpers.js';

const BIN = fileURLToPath(new URL('../bin/weft.js', import.meta.url));
const VERSION = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
const run = promisify(execFile);

interface Ran {
  code: number;
  out: string;
  err: string;
}

function env(url: string): NodeJS.ProcessEnv {
  return { ...process.env, NO_COLOR: '1', WEFT_API_KEY: TEST_ADMIN_KEY, WEFT_URL: url };
}

/** Runs `weft` to its end and returns its exit code and output (never throws on a non-zero exit). */
async function weft(args: string[], url: string): Promise<Ran> {
  try {
    const { stdout, stderr } = await run(process.execPath, [BIN, ...args], { env: env(url) });
    return { code: 0, out: stdout, err: stderr };
  } catch (e) {
    const x = e as { code: number; stdout: string; stderr: string };
    return { code: x.code, out: x.stdout, err: x.stderr };
  }
}

/** Starts `weft` and lets the test act while it runs; `done` is its exit code and output. */
function weftRunning(args: string[], url: string): { child: ChildProcess; done: Promise<Ran> } {
  const child = spawn(process.execPath, [BIN, ...args], { env: env(url) });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => {
    out += d;
  });
  child.stderr.on('data', (d) => {
    err += d;
  });
  const done = new Promise<Ran>((resolve) =>
    child.once('close', (code) => resolve({ code: code ?? -1, out, err })),
  );
  return { child, done };
}

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
  await t.call('POST', '/v1/definitions', 'name: script\nnodes:\n  - { id: only, task_type: script.only }\n');
});
afterAll(async () => {
  await t?.close();
});

/** Takes the next task of `script.only` (waiting for it) and reports it: an output, or an error. */
async function finishTask(outcome: { output: unknown } | { error: string }): Promise<string> {
  for (;;) {
    const poll = await t.call('POST', '/v1/tasks/poll', {
      worker: 'w',
      task_types: ['script.only'],
      wait_ms: 5000,
    });
    const task = poll.body.tasks[0];
    if (!task) continue;
    const fence = { run_id: task.run_id, attempt: task.attempt, lease_token: task.lease_token };
    const report =
      'output' in outcome
        ? await t.call('POST', `/v1/tasks/${task.task_id}/complete`, { ...fence, output: outcome.output })
        : await t.call('POST', `/v1/tasks/${task.task_id}/fail`, {
            ...fence,
            error: { message: outcome.error, retryable: false },
          });
    expect(report.status).toBe(200);
    return task.run_id;
  }
}

async function startRun(input: unknown = {}, key?: string): Promise<string> {
  const started = await t.call('POST', '/v1/runs', {
    definition: 'script',
    input,
    ...(key ? { idempotency_key: key } : {}),
  });
  expect(started.status).toBe(201);
  return started.body.id;
}

// Every test starts real `weft` processes; on a loaded machine each can take seconds to start.
describe('weft for scripts', { timeout: 240_000 }, () => {
  it('prints its version, and exits 2 for a wrong command line', async () => {
    const version = await weft(['--version'], t.url);
    expect(version).toMatchObject({ code: 0, out: `${VERSION}\n` });
    expect((await weft(['-V'], t.url)).out).toBe(`${VERSION}\n`);
    const unknown = await weft(['runs', 'list', '--colour', 'red'], t.url);
    expect(unknown.code).toBe(2);
    expect(unknown.err).toMatch(/unknown option '--colour'/);
    expect((await weft(['runs', 'list', '--limit', 'lots'], t.url)).code).toBe(2);
    expect((await weft(['start', 'script', '--input', '{oops'], t.url)).code).toBe(2);
    // A value only the server can check (a version without its definition) is a usage error too.
    const versionAlone = await weft(['runs', 'list', '--version', '2'], t.url);
    expect(versionAlone.code).toBe(2);
    expect(versionAlone.err).toMatch(/version needs definition/);
    expect((await weft(['--help'], t.url)).code).toBe(0);
  });

  it('exits 3 for what does not exist, 4 for a conflict, 5 when the server is unreachable, with JSON errors', async () => {
    const missing = await weft(['runs', 'show', '01900000-0000-7000-8000-000000000042', '--json'], t.url);
    expect(missing.code).toBe(3);
    expect(missing.out).toBe('');
    expect(JSON.parse(missing.err)).toMatchObject({
      error: { code: 'run_not_found', message: /there is no run/ },
    });
    const id = await startRun();
    expect((await weft(['cancel', id], t.url)).code).toBe(0);
    const again = await weft(['cancel', id, '--json'], t.url);
    expect(again.code).toBe(4);
    expect(JSON.parse(again.err).error.message).toMatch(/already cancelled/);
    const down = await weft(['runs', 'list', '--json'], 'http://127.0.0.1:9');
    expect(down.code).toBe(5);
    expect(JSON.parse(down.err)).toMatchObject({ error: { code: 'unreachable' } });
  });

  it('answers --json on read commands, and lists runs by every filter the API has', async () => {
    const key = `key-${process.pid}`;
    const id = await startRun({ n: 1 }, key);
    const other = await startRun({ n: 2 });
    const list = await weft(['runs', 'list', '--json', '--definition', 'script', '--version', '1'], t.url);
    expect(list.code).toBe(0);
    const page = JSON.parse(list.out) as { items: { id: string }[]; next_cursor: string | null };
    expect(page.items.map((r) => r.id)).toEqual(expect.arrayContaining([id, other]));
    const byKey = JSON.parse((await weft(['runs', 'list', '--json', '--idempotency-key', key], t.url)).out);
    expect(byKey.items.map((r: { id: string }) => r.id)).toEqual([id]);
    const byPrefix = JSON.parse(
      (await weft(['runs', 'list', '--json', '--run-id', id.slice(0, 30)], t.url)).out,
    );
    expect(byPrefix.items.map((r: { id: string }) => r.id)).toEqual([id]);
    const future = new Date(Date.now() + 86_400_000).toISOString();
    const after = JSON.parse((await weft(['runs', 'list', '--json', '--started-after', future], t.url)).out);
    expect(after.items).toEqual([]);
    const before = JSON.parse(
      (await weft(['runs', 'list', '--json', '--started-before', future], t.url)).out,
    );
    expect(before.items.map((r: { id: string }) => r.id)).toEqual(expect.arrayContaining([id, other]));
    const shown = JSON.parse((await weft(['runs', 'show', id, '--json'], t.url)).out);
    expect(shown).toMatchObject({ id, status: 'running', input: { n: 1 }, tasks: [{ node_id: 'only' }] });
    const history = JSON.parse((await weft(['runs', 'history', id, '--json'], t.url)).out);
    expect(history.events[0]).toMatchObject({ seq: 1, type: 'run.started' });
    await t.call('POST', `/v1/runs/${id}/cancel`, {});
    await t.call('POST', `/v1/runs/${other}/cancel`, {});
  });

  it('answers --json with one JSON document on every read command, and bulk', async () => {
    for (const args of [
      ['limits'],
      ['inbox'],
      ['schedules'],
      ['sweep'],
      ['dead-letters', 'list'],
      ['keys', 'list'],
      ['audit'],
      ['bulk', 'cancel', '--definition', 'nothing-here', '--dry-run'],
    ]) {
      const answer = await weft([...args, '--json'], t.url);
      expect({ args, code: answer.code }).toEqual({ args, code: 0 });
      expect(() => JSON.parse(answer.out), `${args.join(' ')} --json: ${answer.out}`).not.toThrow();
    }
  });

  it('start --wait prints the output and exits 0 when the run completes', async () => {
    const long = 'x'.repeat(300);
    const waiting = weftRunning(['start', 'script', '--wait', '--input', '{"a":1}'], t.url);
    const id = await finishTask({ output: { long } });
    const done = await waiting.done;
    expect(done.code).toBe(0);
    expect(JSON.parse(done.out)).toEqual({ only: { long } });
    expect(done.err).toContain(`started run ${id}`);
    // --full shows what the table shortens: the whole output, the run's and the attempt's.
    const full = await weft(['runs', 'show', id, '--full'], t.url);
    expect(full.code).toBe(0);
    expect(full.out.split(long).length - 1).toBe(2);
    expect((await weft(['runs', 'show', id], t.url)).out).not.toContain(long);
    // Watching a completed run exits 0.
    const watched = await weft(['runs', 'watch', id], t.url);
    expect(watched.code).toBe(0);
    expect(watched.out).toMatch(/is completed/);
  });

  it('start --wait and runs watch exit 6 when the run fails; --json prints the run with its error', async () => {
    const waiting = weftRunning(['start', 'script', '--wait', '--json'], t.url);
    const id = await finishTask({ error: 'the card was declined' });
    const done = await waiting.done;
    expect(done.code).toBe(6);
    expect(JSON.parse(done.out)).toMatchObject({ id, status: 'failed' });
    expect(JSON.parse(done.err)).toMatchObject({
      error: { code: 'run_failed', message: /card was declined/ },
    });
    const watched = await weft(['runs', 'watch', id], t.url);
    expect(watched.code).toBe(6);
    expect(watched.out).toMatch(/is failed/);
    const watchedJson = await weft(['runs', 'watch', id, '--json'], t.url);
    expect(watchedJson.code).toBe(6);
    const lines = watchedJson.out
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines[0]).toMatchObject({ event: { seq: 1, type: 'run.started' } });
    expect(lines.at(-1)).toMatchObject({ run: { id, status: 'failed' } });
  });

  it('start --wait --timeout stops waiting with exit 1; the run goes on', async () => {
    const done = await weft(['start', 'script', '--wait', '--timeout', '300ms'], t.url);
    expect(done.code).toBe(1);
    expect(done.err).toMatch(/is still running after waiting 300 ms; it goes on/);
    await finishTask({ output: null });
  });
});
