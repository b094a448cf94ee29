import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { afterEach, describe, expect, it } from 'vitest';
import { buildProgram, helpOf } from '../dist/index.js';

// Every setting of `weft server` and `weft dev` has an environment variable (WEFT_*, or the usual DATABASE_URL
// and REDIS_URL), named in the command's --help and in docs/reference/configuration.md next to its option.

const PAGE = readFileSync(
  fileURLToPath(new URL('../../../docs/reference/configuration.md', import.meta.url)),
  'utf8',
);
const USUAL_NAMES = ['DATABASE_URL', 'REDIS_URL'];

function command(name: string): Command {
  const found = buildProgram({}).commands.find((c) => c.name() === name);
  if (!found) throw new Error(`no command ${name}`);
  return found;
}

/** The environment variable of an option: commander's, or the one its description names. */
function envOf(option: { envVar?: string; description: string }): string | undefined {
  return option.envVar ?? /\(env: ([A-Z][A-Z0-9_]*)/.exec(option.description)?.[1];
}

/** The rows of the page's server options table, as their first two cells. */
function tableRows(): { option: string; env: string }[] {
  const section = PAGE.slice(
    PAGE.indexOf('## Server options'),
    PAGE.indexOf('\n## ', PAGE.indexOf('## Server options') + 1),
  );
  return section
    .split('\n')
    .filter((l) => l.startsWith('| `') || l.startsWith('|  '))
    .map((l) => {
      const cells = l.split('|').map((c) => c.trim());
      return { option: cells[1]!, env: cells[2]! };
    });
}

describe('server settings', () => {
  for (const name of ['server', 'dev']) {
    it(`every option of weft ${name} has an environment variable, in --help and on the configuration page`, () => {
      const cmd = command(name);
      const help = helpOf(cmd);
      const rows = tableRows();
      const options = cmd.options.filter((o) => o.long !== '--help');
      expect(options.length).toBeGreaterThan(15);
      const problems: string[] = [];
      for (const option of options) {
        const env = envOf(option);
        if (!env) {
          problems.push(`${option.long} has no environment variable`);
          continue;
        }
        if (!env.startsWith('WEFT_') && !USUAL_NAMES.includes(env))
          problems.push(`${option.long}: ${env} is not WEFT_*`);
        if (!help.includes(env)) problems.push(`${option.long}: ${env} is not in --help`);
        const row = rows.find(
          (r) => r.option === `\`${option.long}\`` || r.option.startsWith(`\`${option.long} `),
        );
        if (!row) problems.push(`${option.long} is not in the configuration page's table`);
        else if (!row.env.includes(`\`${env}\``))
          problems.push(`${option.long}: the page names ${row.env}, not ${env}`);
      }
      expect(problems).toEqual([]);
    });
  }

  it('the settings read only from the environment are named in --help and on the page', () => {
    const help = helpOf(command('server'));
    const named = [
      ...help.slice(help.indexOf('Also read from the environment:')).matchAll(/^ {2}(WEFT_[A-Z0-9_]+)/gm),
    ].map((m) => m[1]!);
    expect(named).toContain('WEFT_SECRETS_KEY');
    expect(named).toContain('WEFT_RATE_LIMIT');
    for (const env of named) expect(PAGE, env).toContain(`\`${env}\``);
  });
});

describe('server settings from the environment', () => {
  const saved = { ...process.env };
  afterEach(() => {
    process.env = { ...saved };
  });

  /** The options `weft server` would run with, parsed (its action replaced so that nothing starts). */
  async function parsedOptions(args: string[]): Promise<Record<string, unknown>> {
    const program = buildProgram({});
    const server = program.commands.find((c) => c.name() === 'server')!;
    let seen: Record<string, unknown> = {};
    server.action((o: Record<string, unknown>) => {
      seen = o;
    });
    program.exitOverride();
    server.exitOverride();
    server.configureOutput({ writeErr: () => {} });
    await program.parseAsync(['server', ...args], { from: 'user' });
    return seen;
  }

  it('takes each setting from its variable, and a flag wins over it', async () => {
    Object.assign(process.env, {
      WEFT_PORT: '9191',
      WEFT_POOL_SIZE: '7',
      WEFT_SHUTDOWN_GRACE: '25s',
      WEFT_LOG_FORMAT: 'pretty',
      WEFT_HOST: '127.0.0.2',
      WEFT_LEASE: '2m',
    });
    const o = await parsedOptions(['--pool-size', '3']);
    expect(o).toMatchObject({
      port: 9191,
      poolSize: 3,
      shutdownGrace: 25_000,
      logFormat: 'pretty',
      host: '127.0.0.2',
      lease: 120_000,
      migrate: true,
    });
    expect((await parsedOptions(['--no-migrate'])).migrate).toBe(false);
  });

  it('refuses a variable with a bad value, naming it', async () => {
    process.env.WEFT_POOL_SIZE = 'many';
    await expect(parsedOptions([])).rejects.toThrow(/WEFT_POOL_SIZE/);
    process.env.WEFT_POOL_SIZE = '5';
    process.env.WEFT_LOG_FORMAT = 'xml';
    await expect(parsedOptions([])).rejects.toThrow(/WEFT_LOG_FORMAT.*json, pretty/);
  });
});
