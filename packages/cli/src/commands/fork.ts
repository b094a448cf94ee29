import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { status } from '../output.js';
import { cliUser } from './operator-actions.js';
import { type RemoteOptions, withClient } from './remote.js';

function json(value: string): unknown {
  try {
    return JSON.parse(value);
  } catch (e) {
    throw new InvalidArgumentError(`--input is not valid JSON: ${(e as Error).message}`);
  }
}

function version(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('must be a version number (1 or more)');
  return n;
}

/** Registers `weft runs fork` and `weft runs forks` on the `runs` group. */
export function registerForkCommands(runs: Command, remote: () => RemoteOptions): void {
  runs
    .command('fork')
    .description(
      'start a new run from a run, with another input and/or version, reusing the outputs up to a node',
    )
    .argument('<id>', 'the run to fork')
    .option('--input <json>', 'the new run input (default: the run input)', json)
    .option('--version <n>', 'the definition version to run (default: the run version)', version)
    .option('--up-to <node>', 'reuse the output of this node and of every node before it')
    .action((id: string, o: { input?: unknown; version?: number; upTo?: string }) =>
      withClient(remote(), async (c) => {
        const run = await c.forkRun(id, {
          by: cliUser(),
          ...(o.input !== undefined ? { input: o.input } : {}),
          ...(o.version !== undefined ? { version: o.version } : {}),
          ...(o.upTo !== undefined ? { up_to_node: o.upTo } : {}),
        });
        console.log(`forked run ${run.id} from ${id} (version ${run.version}, ${status(run.status)})`);
      }),
    );
  runs
    .command('forks')
    .description('show the run a run was forked from, and the runs forked from it')
    .argument('<id>', 'run id')
    .action((id: string) =>
      withClient(remote(), async (c) => {
        const links = await c.forks(id);
        console.log(
          `forked from: ${links.forked_from ?? '-'}${links.up_to_node ? ` (up to ${links.up_to_node})` : ''}`,
        );
        console.log(`forks: ${links.forks.length === 0 ? '-' : links.forks.join(' ')}`);
      }),
    );
}
