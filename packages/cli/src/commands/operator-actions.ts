import { userInfo } from 'node:os';
import type { Json, Run, RunStatus } from '@weft/client';
import { type Command, InvalidArgumentError } from 'commander';
import { CliError } from '../errors.js';
import { print, status } from '../output.js';
import { bulkCommand } from './bulk.js';
import { type RemoteOptions, withClient } from './remote.js';
import { historyCommand, watchCommand } from './watch.js';

/** Who the CLI says is asking: the operating-system user. */
export function cliUser(): string {
  let name = process.env.USER ?? process.env.USERNAME;
  try {
    name ??= userInfo().username;
  } catch {
    // no user name to be had
  }
  return `cli:${name ?? 'unknown'}`;
}

function json(flag: string) {
  return (value: string): Json => {
    try {
      return JSON.parse(value) as Json;
    } catch (e) {
      throw new InvalidArgumentError(`${flag} is not valid JSON: ${(e as Error).message}`);
    }
  };
}

function positiveWhole(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('must be a whole number of at least 1');
  return n;
}

function said(run: Run): void {
  print(run, () => `run ${run.id} is ${status(run.status)}`);
}

/**
 * Registers the operator commands: pause, resume, terminate, retry, rerun, `task skip|complete|fail`,
 * `bulk`, and `runs watch` / `runs history` on the `runs` group.
 */
export function registerOperatorActionCommands(
  program: Command,
  runs: Command,
  remote: () => RemoteOptions,
): void {
  const asking = (o: { reason?: string }) => ({ by: cliUser(), ...(o.reason ? { reason: o.reason } : {}) });

  program
    .command('pause')
    .description('pause a running run: nothing new starts; tasks already running may finish')
    .argument('<id>', 'run id')
    .option('--reason <text>', 'why, for the run history')
    .action((id, o) => withClient(remote(), async (c) => said(await c.pauseRun(id, asking(o)))));

  program
    .command('resume')
    .description('resume a paused run')
    .argument('<id>', 'run id')
    .option('--reason <text>', 'why, for the run history')
    .action((id, o) => withClient(remote(), async (c) => said(await c.resumeRun(id, asking(o)))));

  program
    .command('terminate')
    .description('terminate a running or paused run: open tasks stop and late reports are refused')
    .argument('<id>', 'run id')
    .requiredOption('--reason <text>', 'why (required), for the run history')
    .action((id, o) =>
      withClient(remote(), async (c) => said(await c.terminateRun(id, o.reason, cliUser()))),
    );

  program
    .command('retry')
    .description(
      'run the failed, timed-out and cancelled nodes of a finished run again; completed outputs are kept',
    )
    .argument('<id>', 'run id')
    .option('--reason <text>', 'why, for the run history')
    .action((id, o) => withClient(remote(), async (c) => said(await c.retryRun(id, asking(o)))));

  program
    .command('rerun')
    .description('run a node and everything after it again, as new attempts, in a finished run')
    .argument('<id>', 'run id')
    .requiredOption('--from <node>', 'the node to run again')
    .option('--iteration <key>', 'the iteration of that node, inside a loop or map')
    .option('--reason <text>', 'why, for the run history')
    .action((id, o) =>
      withClient(remote(), async (c) =>
        said(
          await c.rerunRun(id, o.from, {
            ...asking(o),
            ...(o.iteration !== undefined ? { iteration: o.iteration } : {}),
          }),
        ),
      ),
    );

  const task = program.command('task').description('finish a task of a running or paused run by hand');
  const at = (o: { iteration?: string }) => (o.iteration !== undefined ? { iteration: o.iteration } : {});
  task
    .command('skip')
    .description('mark a task skipped (later nodes may read the given output) and continue the run')
    .argument('<run>', 'run id')
    .argument('<node>', 'node id')
    .option('--output <json>', 'output later nodes read', json('--output'))
    .option('--iteration <key>', 'the iteration, inside a loop or map')
    .option('--reason <text>', 'why, for the run history')
    .action((run, node, o) =>
      withClient(remote(), async (c) =>
        said(
          await c.skipTask(run, node, {
            ...asking(o),
            ...at(o),
            ...(o.output !== undefined ? { output: o.output } : {}),
          }),
        ),
      ),
    );
  task
    .command('complete')
    .description('complete a task by hand with the given output, as if its worker had')
    .argument('<run>', 'run id')
    .argument('<node>', 'node id')
    .requiredOption('--output <json>', 'the output', json('--output'))
    .option('--iteration <key>', 'the iteration, inside a loop or map')
    .option('--reason <text>', 'why, for the run history')
    .action((run, node, o) =>
      withClient(remote(), async (c) =>
        said(await c.completeTask(run, node, o.output, { ...asking(o), ...at(o) })),
      ),
    );
  task
    .command('fail')
    .description('fail a task by hand; it is retried by its policy only with --retryable')
    .argument('<run>', 'run id')
    .argument('<node>', 'node id')
    .requiredOption('--error <message>', 'the error message')
    .option('--retryable', 'let the node retry policy try again', false)
    .option('--iteration <key>', 'the iteration, inside a loop or map')
    .option('--reason <text>', 'why, for the run history')
    .action((run, node, o) =>
      withClient(remote(), async (c) =>
        said(
          await c.failTask(
            run,
            node,
            { message: o.error, retryable: Boolean(o.retryable) },
            { ...asking(o), ...at(o) },
          ),
        ),
      ),
    );

  program
    .command('bulk')
    .description('cancel, terminate or retry every run matching a filter, in batches, with progress')
    .argument('<action>', 'cancel, terminate or retry')
    .option('--definition <name>', 'only runs of this definition')
    .option('--version <n>', 'only runs of this version (with --definition)', positiveWhole)
    .option('--status <status>', 'only runs in this status')
    .option('--started-before <time>', 'only runs started before this time (ISO, e.g. 2026-01-31T12:00:00Z)')
    .option('--started-after <time>', 'only runs started at or after this time')
    .option('--reason <text>', 'why (required for terminate), for each run history')
    .option('--batch-size <n>', 'runs per batch', (v) => Number(v), 100)
    .option('--dry-run', 'only list the runs that match', false)
    .action((action, o) => {
      if (!['cancel', 'terminate', 'retry'].includes(action))
        throw new CliError(`the action must be cancel, terminate or retry, not ${JSON.stringify(action)}`);
      return bulkCommand(
        action,
        { ...o, status: o.status as RunStatus | undefined, by: cliUser() },
        remote(),
      );
    });

  runs
    .command('watch')
    .description('show a run live: its nodes and new history events as they happen (Ctrl-C to stop)')
    .argument('<id>', 'run id')
    .option('--follow', 'keep watching after the run finishes (a retry or rerun may start it again)', false)
    .action((id, o) => watchCommand(id, { follow: Boolean(o.follow) }, remote()));

  runs
    .command('logs')
    .description("print the lines a run's handlers wrote (ctx.log), oldest first")
    .argument('<id>', 'run id')
    .option('--node <id>', "only this node's lines")
    .option('--attempt <n>', 'only lines of this attempt', positiveWhole)
    .option('--follow', 'keep printing new lines until the run has finished (Ctrl-C to stop)', false)
    .action(async (id, o) => (await import('./logs.js')).logsCommand(id, o, remote()));

  runs
    .command('history')
    .description("print a run's history, page by page")
    .argument('<id>', 'run id')
    .option('--after <seq>', 'start after this sequence number', (v) => Number(v), 0)
    .option('--limit <n>', 'events per page', (v) => Number(v), 200)
    .option('--all', 'print every page, not only the first', false)
    .action((id, o) => historyCommand(id, o, remote()));
}
