import { RetentionClient } from '@weft/client';
import { formatDuration } from '@weft/core';
import type { Command } from 'commander';
import { CliError } from '../errors.js';
import { table } from '../output.js';
import type { RemoteOptions } from './remote.js';

async function withRetention<T>(o: RemoteOptions, fn: (c: RetentionClient) => Promise<T>): Promise<T> {
  const c = new RetentionClient({ url: o.url, namespace: o.namespace, connections: 1 });
  try {
    return await fn(c);
  } finally {
    await c.close();
  }
}

/** `weft retention show`: the namespace's policy and its per-definition overrides. */
export async function showRetentionCommand(o: RemoteOptions): Promise<void> {
  const items = await withRetention(o, (c) => c.policies());
  if (items.length === 0)
    return console.log(`no retention in namespace ${o.namespace}: runs are kept forever`);
  console.log(
    table(
      ['DEFINITION', 'KEEP', 'ARCHIVE', 'UPDATED'],
      items.map((p) => [
        p.definition ?? '(namespace)',
        formatDuration(p.keep_ms),
        p.archive ? 'yes' : 'no',
        p.updated_at,
      ]),
    ),
  );
}

/** `weft retention set 30d [--definition NAME] [--archive]`. */
export async function setRetentionCommand(
  keep: string,
  flags: { definition?: string; archive?: boolean },
  o: RemoteOptions,
): Promise<void> {
  const p = await withRetention(o, (c) =>
    c.set(keep, {
      ...(flags.definition ? { definition: flags.definition } : {}),
      archive: flags.archive ?? false,
    }),
  );
  const what = p.definition ? `runs of ${p.definition}` : `runs of namespace ${p.namespace}`;
  console.log(
    `finished ${what} are kept ${formatDuration(p.keep_ms)}${p.archive ? ', archived before deletion' : ''}`,
  );
}

/** `weft retention clear [--definition NAME]`. */
export async function clearRetentionCommand(flags: { definition?: string }, o: RemoteOptions): Promise<void> {
  const { deleted } = await withRetention(o, (c) => c.clear(flags.definition));
  const what = flags.definition ? `definition ${flags.definition}` : `namespace ${o.namespace}`;
  console.log(deleted ? `cleared the retention of ${what}` : `${what} had no retention of its own`);
}

/** `weft runs purge --before ISO [--definition NAME] [--dry-run]`. */
export async function purgeRunsCommand(
  flags: { before: string; definition?: string; dryRun?: boolean },
  o: RemoteOptions,
): Promise<void> {
  if (Number.isNaN(new Date(flags.before).getTime()))
    throw new CliError(
      `--before ${JSON.stringify(flags.before)} is not a time; write it like 2026-01-31T00:00:00Z`,
    );
  const out = await withRetention(o, (c) =>
    c.purge({
      before: flags.before,
      ...(flags.definition ? { definition: flags.definition } : {}),
      dry_run: flags.dryRun ?? false,
    }),
  );
  console.log(
    out.dry_run
      ? `${out.matched}${out.capped ? ' or more' : ''} finished runs would be purged (nothing deleted: dry run)`
      : `purged ${out.purged} finished runs`,
  );
  if (out.blobs_waiting !== undefined)
    console.log(
      `${out.blobs_waiting} blobs of purged runs wait to be deleted from the blob store` +
        (out.blobs_failing ? ` (${out.blobs_failing} failed and will be tried again)` : ''),
    );
}

/** `weft retention show|set|clear` and `weft runs purge`. */
export function registerRetentionCommands(
  program: Command,
  runs: Command,
  remote: () => RemoteOptions,
): void {
  const retention = program
    .command('retention')
    .description('how long finished runs of the namespace are kept: show, set, clear');
  retention
    .command('show')
    .description("the namespace's retention and its per-definition overrides")
    .action(() => showRetentionCommand(remote()));
  retention
    .command('set')
    .description('keep finished runs this long (30d, 12h), then delete them; --definition overrides for one')
    .argument('<keep>', 'a duration such as 30d or 12h (at least 1m)')
    .option('--definition <name>', "only this definition's runs (overrides the namespace's)")
    .option('--archive', 'write each run to the blob store before deleting it')
    .action((keep, flags) => setRetentionCommand(keep, flags, remote()));
  retention
    .command('clear')
    .description("remove the namespace's retention (runs are kept forever) or a definition's override")
    .option('--definition <name>', "remove only this definition's override")
    .action((flags) => clearRetentionCommand(flags, remote()));
  runs
    .command('purge')
    .description('delete finished runs that finished before a time (archived first if retention says so)')
    .requiredOption('--before <time>', 'runs finished before this time (ISO 8601)')
    .option('--definition <name>', 'only runs of this definition')
    .option('--dry-run', 'count the runs, delete nothing')
    .action((flags) => purgeRunsCommand(flags, remote()));
}
