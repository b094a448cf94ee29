import { SecretsClient } from '@weft/client';
import type { Command } from 'commander';
import { CliError } from '../errors.js';
import { print, table } from '../output.js';
import type { RemoteOptions } from './remote.js';

async function withSecrets<T>(o: RemoteOptions, fn: (c: SecretsClient) => Promise<T>): Promise<T> {
  const c = new SecretsClient({ url: o.url, namespace: o.namespace, connections: 1 });
  try {
    return await fn(c);
  } finally {
    await c.close();
  }
}

/** Reads a value from standard input, without its final newline. */
async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) process.stderr.write('value (end with Ctrl-D): ');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

/** `weft secrets set NAME`: the value from `--value` or standard input. */
export async function setSecretCommand(
  name: string,
  flags: { value?: string },
  o: RemoteOptions,
): Promise<void> {
  const value = flags.value ?? (await readStdin());
  if (value === '') throw new CliError('the value is empty: pass --value or pipe it on standard input');
  await withSecrets(o, (c) => c.set(name, value));
  print({ name, set: true }, () => `set secret ${name} in namespace ${o.namespace}`);
}

/** `weft secrets list`: names and when each was set; never a value. */
export async function listSecretsCommand(o: RemoteOptions): Promise<void> {
  const items = await withSecrets(o, (c) => c.list());
  print({ items }, () =>
    items.length === 0
      ? `no secrets in namespace ${o.namespace}`
      : table(
          ['NAME', 'UPDATED'],
          items.map((s) => [s.name, s.updated_at]),
        ),
  );
}

/** `weft secrets delete NAME`. */
export async function deleteSecretCommand(name: string, o: RemoteOptions): Promise<void> {
  await withSecrets(o, (c) => c.delete(name));
  print({ name, deleted: true }, () => `deleted secret ${name}`);
}

/** `weft secrets set|list|delete`. */
export function registerSecretCommands(program: Command, remote: () => RemoteOptions): void {
  const secrets = program
    .command('secrets')
    .description('secrets of the namespace, for http nodes and status callbacks: set, list names, delete');
  secrets
    .command('set')
    .description('set a secret (sealed by the server; the value from --value or standard input)')
    .argument('<name>', 'letters, digits and _, starting with a letter or _')
    .option(
      '--value <value>',
      'the value (otherwise read from standard input, which keeps it out of shell history)',
    )
    .action((name, o) => setSecretCommand(name, o, remote()));
  secrets
    .command('list')
    .description('list secrets by name (values are never shown)')
    .action(() => listSecretsCommand(remote()));
  secrets
    .command('delete')
    .description('delete a secret')
    .argument('<name>', 'the secret')
    .action((name) => deleteSecretCommand(name, remote()));
}
