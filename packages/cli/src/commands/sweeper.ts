import { type SweeperRepair, WeftClient } from '@weft/client';
import type { Command } from 'commander';
import { CliError } from '../errors.js';
import { color, table } from '../output.js';
import { clientOptions, type RemoteOptions } from './remote.js';

/** What a repair changed, in a few words. */
function changedText(r: SweeperRepair): string {
  const parts = [
    ...(r.changed.status ? [`run ${r.changed.status}`] : []),
    ...(r.changed.tasks.length > 0 ? [`started ${r.changed.tasks.map((t) => t.node).join(', ')}`] : []),
    ...(r.changed.task_updates > 0 ? [`${r.changed.task_updates} attempt(s) changed`] : []),
    ...(r.changed.timers > 0 ? [`${r.changed.timers} timer(s)`] : []),
  ];
  return parts.length > 0 ? parts.join('; ') : 'nothing but run.repaired';
}

const movedText = (moved: boolean | null) =>
  moved === null ? color.dim('not checked yet') : moved ? 'yes' : color.red('no');

/** `weft sweeper repairs`: the sweeper's audit, newest first. */
export async function sweeperRepairsCommand(
  o: { run?: string; stuck?: boolean; limit: number; before?: string },
  remote: RemoteOptions,
): Promise<void> {
  if (o.before !== undefined && !/^[0-9]{1,18}$/.test(o.before))
    throw new CliError('--before takes a repair id (a number, from the previous page)');
  const c = new WeftClient(clientOptions(remote, 2));
  try {
    const page = await c.sweeperRepairs({
      limit: o.limit,
      ...(o.run ? { run_id: o.run } : {}),
      ...(o.stuck ? { moved: false } : {}),
      ...(o.before ? { before: o.before } : {}),
    });
    if (page.items.length === 0) {
      console.log('no repairs: the sweeper has found nothing stuck');
      return;
    }
    console.log(
      table(
        ['ID', 'RUN', 'REPAIRED AT', 'FOUND', 'IDLE', 'CHANGED', 'MOVED'],
        page.items.map((r) => [
          r.id,
          r.run_id,
          r.repaired_at,
          `${r.found.status} after ${r.found.last_event?.type ?? 'its start'}`,
          `${Math.round(r.found.idle_ms / 1000)}s`,
          changedText(r),
          movedText(r.moved),
        ]),
      ),
    );
    if (page.next_before) console.log(color.dim(`more: weft sweeper repairs --before ${page.next_before}`));
  } finally {
    await c.close();
  }
}

/** `weft sweeper repairs`. */
export function registerSweeperCommands(
  program: Command,
  remote: () => RemoteOptions,
  positiveInt: (value: string) => number,
): void {
  const sweeper = program.command('sweeper').description('the stuck-run sweeper: its audit of repairs');
  sweeper
    .command('repairs')
    .description('what each repair found and changed, and whether the run moved after it, newest first')
    .option('--run <id>', 'only the repairs of this run')
    .option('--stuck', 'only repairs after which the run did not move')
    .option('--limit <n>', 'repairs per page', positiveInt, 20)
    .option('--before <id>', 'continue from a previous page')
    .action((o) => sweeperRepairsCommand(o, remote()));
}
