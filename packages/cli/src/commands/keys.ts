import { type KeyRole, WeftAdminClient } from '@weft/client';
import { connect, migrate, PgApiKeys } from '@weft/postgres';
import { generateKey, issueKey } from '@weft/server';
import { CliError } from '../errors.js';
import { brief, color, note, print, table } from '../output.js';
import { clientOptions, type RemoteOptions } from './remote.js';

const ROLES = ['admin', 'operator', 'viewer', 'worker'];

/** What `weft keys create` takes. */
export interface CreateKeyFlags {
  readonly role: string;
  readonly namespaces?: string;
  readonly taskTypes?: string;
  readonly expiresIn?: string;
  readonly bootstrap?: boolean;
  readonly databaseUrl?: string;
}

async function withAdmin<T>(o: RemoteOptions, fn: (c: WeftAdminClient) => Promise<T>): Promise<T> {
  const c = new WeftAdminClient(clientOptions(o, 1));
  try {
    return await fn(c);
  } finally {
    await c.close();
  }
}

const list = (value: string | undefined) =>
  value === undefined
    ? null
    : value
        .split(',')
        .map((v) => v.trim())
        .filter((v) => v !== '');

function shown(key: string): void {
  print({ key }, () => key);
  note(color.dim('this key is shown once and never stored: keep it now'));
}

/**
 * `weft keys create NAME`: through the API with an admin key, or with `--bootstrap` straight on the
 * database (DATABASE_URL), for the first admin key of an installation.
 */
export async function createKeyCommand(name: string, f: CreateKeyFlags, o: RemoteOptions): Promise<void> {
  if (!ROLES.includes(f.role)) throw new CliError(`--role must be one of ${ROLES.join(', ')}, not ${f.role}`);
  const spec = {
    name,
    role: f.role as KeyRole,
    namespaces: list(f.namespaces),
    task_types: list(f.taskTypes),
    ...(f.expiresIn ? { expires_in: f.expiresIn } : {}),
  };
  if (!f.bootstrap) {
    await withAdmin(o, async (c) => shown((await c.createKey(spec)).key));
    return;
  }
  if (!f.databaseUrl)
    throw new CliError('--bootstrap works on the database: set DATABASE_URL or pass --database-url');
  if (f.expiresIn) throw new CliError('--expires-in needs the API: create the key without --bootstrap');
  const sql = connect(f.databaseUrl, { max: 1, applicationName: 'weft-keys' });
  try {
    await migrate(sql);
    const issued = await issueKey(
      new PgApiKeys(sql),
      { name, role: spec.role, namespaces: spec.namespaces, taskTypes: spec.task_types },
      'bootstrap',
    );
    shown(issued.key);
  } finally {
    await sql.end();
  }
}

/** `weft keys list`: every key, without secrets. */
export async function listKeysCommand(o: RemoteOptions): Promise<void> {
  await withAdmin(o, async (c) => {
    print(await c.listKeys(), ({ items }) =>
      table(
        ['NAME', 'ROLE', 'NAMESPACES', 'TASK TYPES', 'EXPIRES', 'LAST USED', 'STATE'],
        items.map((k) => [
          k.name,
          k.role,
          k.namespaces?.join(',') ?? 'all',
          k.task_types?.join(',') ?? (k.role === 'worker' ? 'any' : ''),
          k.expires_at ?? 'never',
          k.last_used_at ?? 'never',
          k.revoked_at ? color.red('revoked') : 'active',
        ]),
      ),
    );
  });
}

/** `weft keys revoke NAME`. */
export async function revokeKeyCommand(name: string, o: RemoteOptions): Promise<void> {
  await withAdmin(o, async (c) => {
    print(await c.revokeKey(name), (k) => `revoked ${k.name} at ${k.revoked_at}`);
  });
}

/** `weft keys generate`: a fresh key to give as WEFT_BOOTSTRAP_ADMIN_KEY. */
export function generateKeyCommand(): void {
  const { key } = generateKey();
  print({ key }, () => key);
}

/** `weft audit`: administrative changes, newest first. */
export async function auditCommand(
  page: { limit?: number; before?: string },
  o: RemoteOptions,
): Promise<void> {
  await withAdmin(o, async (c) => {
    print(await c.audit(page), (answer) => [
      table(
        ['ID', 'AT', 'ACTOR', 'ACTION', 'NAMESPACE', 'TARGET', 'DETAILS'],
        answer.items.map((e) => [
          e.id,
          e.at,
          e.actor,
          e.action,
          e.namespace ?? '',
          e.target ?? '',
          brief(e.details, 60),
        ]),
      ),
      ...(answer.next_before ? [color.dim(`more: weft audit --before ${answer.next_before}`)] : []),
    ]);
  });
}
