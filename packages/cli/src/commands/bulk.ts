import type { BulkFilter, RunStatus } from '@weft/client';
import { UsageError } from '../errors.js';
import { color, jsonOutput, note, print } from '../output.js';
import { type RemoteOptions, withClient } from './remote.js';

/** Options of `weft bulk`. */
export interface BulkOptions {
  readonly definition?: string;
  readonly version?: number;
  readonly status?: RunStatus;
  readonly startedBefore?: string;
  readonly startedAfter?: string;
  readonly reason?: string;
  readonly batchSize: number;
  readonly dryRun: boolean;
  readonly by: string;
}

/** Refusals printed one by one; the rest are counted. */
const SHOWN = 20;

/**
 * `weft bulk ACTION`: asks the server for one batch at a time (each run in its own transaction there),
 * printing progress after each, then a summary of what was done and what was refused, and why.
 */
export async function bulkCommand(
  action: 'cancel' | 'terminate' | 'retry',
  o: BulkOptions,
  remote: RemoteOptions,
): Promise<void> {
  if (action === 'terminate' && !o.dryRun && !o.reason?.trim())
    throw new UsageError('terminate needs --reason: say why, it is kept in the history of every run');
  if (o.version !== undefined && o.definition === undefined)
    throw new UsageError('--version needs --definition: versions are per definition');
  if (!Number.isInteger(o.batchSize) || o.batchSize < 1 || o.batchSize > 1000)
    throw new UsageError('--batch-size must be a whole number from 1 to 1000');
  const filter: BulkFilter = {
    ...(o.definition ? { definition: o.definition } : {}),
    ...(o.version ? { version: o.version } : {}),
    ...(o.status ? { status: o.status } : {}),
    ...(o.startedBefore ? { started_before: isoTime('--started-before', o.startedBefore) } : {}),
    ...(o.startedAfter ? { started_after: isoTime('--started-after', o.startedAfter) } : {}),
  };
  await withClient(remote, async (c) => {
    let cursor: string | null = null;
    let batch = 0;
    let matched = 0;
    let done = 0;
    const refusals: { run_id: string; code: string; message: string }[] = [];
    const wouldBe: string[] = [];
    do {
      const answer = await c.bulk(action, filter, {
        by: o.by,
        ...(o.reason ? { reason: o.reason } : {}),
        batch_size: o.batchSize,
        dry_run: o.dryRun,
        ...(cursor ? { cursor } : {}),
      });
      batch++;
      matched += answer.matched;
      done += answer.done;
      refusals.push(...answer.refusals);
      if (o.dryRun) {
        wouldBe.push(...answer.done_ids);
        if (!jsonOutput()) for (const id of answer.done_ids) console.log(id);
      } else
        note(
          color.dim(`batch ${batch}: ${matched} matched so far, ${done} done, ${refusals.length} refused`),
        );
      cursor = answer.next_cursor;
    } while (cursor);
    if (o.dryRun) {
      print(
        { matched, run_ids: wouldBe, dry_run: true },
        () => `${matched} run(s) would be ${past(action)} (dry run: nothing was changed)`,
      );
      return;
    }
    print({ matched, done, refusals }, () => {
      const refused = refusals.length > 0 ? color.red(`${refusals.length} refused`) : '0 refused';
      return [
        `${matched} matched: ${color.green(`${done} ${past(action)}`)}, ${refused}`,
        ...refusals.slice(0, SHOWN).map((r) => `  ${r.run_id}  ${color.red(r.code)}  ${r.message}`),
        ...(refusals.length > SHOWN ? [color.dim(`  … and ${refusals.length - SHOWN} more`)] : []),
      ];
    });
  });
}

function past(action: 'cancel' | 'terminate' | 'retry'): string {
  return { cancel: 'cancelled', terminate: 'terminated', retry: 'retried' }[action];
}

function isoTime(flag: string, value: string): string {
  const at = new Date(value);
  if (Number.isNaN(at.getTime())) throw new UsageError(`${flag} must be a time such as 2026-01-31T12:00:00Z`);
  return at.toISOString();
}
