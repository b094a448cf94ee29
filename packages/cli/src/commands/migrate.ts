import type { MovePlan, MoveTarget, WeftClient } from '@weft/client';
import { type Command, InvalidArgumentError } from 'commander';
import { CliError } from '../errors.js';
import { color } from '../output.js';
import { cliUser } from './operator-actions.js';
import { type RemoteOptions, withClient } from './remote.js';

/** Options of `weft runs migrate`. */
export interface MigrateOptions {
  readonly to: number;
  readonly from?: number;
  readonly map: Record<string, string>;
  readonly run: string[];
  readonly paused: boolean;
  readonly plan: boolean;
  readonly apply: boolean;
  readonly reason?: string;
}

/** Runs per call to the server. */
const PAGE = 500;

function version(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('must be a version number (1 or more)');
  return n;
}

function mapping(value: string, previous: Record<string, string>): Record<string, string> {
  const [from, to, ...rest] = value.split('=');
  if (!from || !to || rest.length > 0)
    throw new InvalidArgumentError(`"${value}" is not old=new, such as charge=charge_card`);
  return { ...previous, [from]: to };
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** Registers `weft runs migrate` on the `runs` group. */
export function registerMigrateCommand(runs: Command, remote: () => RemoteOptions): void {
  runs
    .command('migrate')
    .description(
      'move running runs to another version of their definition: --plan says which can move and why not, --apply moves them',
    )
    .argument('<definition>', 'definition name')
    .requiredOption('--to <version>', 'the version to move to', version)
    .option('--from <version>', 'only runs of this version', version)
    .option('--map <old=new>', 'a node whose id changed (repeatable)', mapping, {})
    .option('--run <id>', 'only this run (repeatable)', collect, [])
    .option('--paused', 'paused runs instead of running ones', false)
    .option('--plan', 'say which runs can move, and why the others cannot; change nothing', false)
    .option('--apply', 'move the runs that can move, each checked again under its lock', false)
    .option('--reason <text>', 'why, for each run history')
    .action((definition: string, o: MigrateOptions) => migrateCommand(definition, o, remote()));
}

/** `weft runs migrate`: plans page by page, then (with --apply) moves the movable runs of each page. */
export async function migrateCommand(
  definition: string,
  o: MigrateOptions,
  remote: RemoteOptions,
): Promise<void> {
  if (o.plan === o.apply)
    throw new CliError('say --plan (change nothing) or --apply (move the runs that can move)');
  if (o.run.length > 0 && (o.from !== undefined || o.paused))
    throw new CliError('--run names the runs: do not combine it with --from or --paused');
  const target: MoveTarget = { definition, to_version: o.to, node_map: o.map };
  await withClient(remote, async (c) => {
    let movable = 0;
    let moved = 0;
    let refused = 0;
    for await (const plan of plans(c, target, o)) {
      const ids = plan.runs.filter((r) => r.movable).map((r) => r.run_id);
      movable += ids.length;
      for (const r of plan.runs.filter((r) => !r.movable)) {
        refused++;
        console.log(`${r.run_id}  ${color.red('stays')}  ${r.reasons.join('; ')}`);
      }
      if (o.plan) {
        for (const id of ids) console.log(`${id}  ${color.green('can move')}`);
        continue;
      }
      if (ids.length === 0) continue;
      const answer = await c.moveRuns({
        ...target,
        run_ids: ids,
        by: cliUser(),
        ...(o.reason ? { reason: o.reason } : {}),
      });
      for (const r of answer.runs) {
        if (r.moved) moved++;
        else {
          refused++;
          console.log(`${r.run_id}  ${color.red('stays')}  ${r.reasons.join('; ')}`);
        }
      }
    }
    if (o.plan)
      console.log(
        `${movable} run(s) can move to version ${o.to}, ${refused} cannot (plan: nothing was changed)`,
      );
    else console.log(`${color.green(`${moved} moved`)} to version ${o.to}, ${refused} stayed`);
  });
}

async function* plans(c: WeftClient, target: MoveTarget, o: MigrateOptions): AsyncGenerator<MovePlan> {
  if (o.run.length > 0) {
    for (let i = 0; i < o.run.length; i += PAGE)
      yield await c.planMove({ ...target, run_ids: o.run.slice(i, i + PAGE) });
    return;
  }
  let cursor: string | null = null;
  do {
    const plan: MovePlan = await c.planMove({
      ...target,
      limit: PAGE,
      status: o.paused ? 'paused' : 'running',
      ...(o.from !== undefined ? { from_version: o.from } : {}),
      ...(cursor ? { cursor } : {}),
    });
    yield plan;
    cursor = plan.next_cursor;
  } while (cursor);
}
