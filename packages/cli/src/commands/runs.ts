import type { RunListFilter, RunStatus, RunWithTasks, Task } from '@weft/client';
import { brief, color, elapsed, print, status, table } from '../output.js';
import { attributePair, type RemoteOptions, withClient } from './remote.js';

/** The filters of `weft runs list`: every filter of `GET /v1/runs`, and its page. */
export interface RunListOptions {
  readonly status?: string;
  readonly definition?: string;
  readonly version?: number;
  readonly startedBefore?: string;
  readonly startedAfter?: string;
  readonly runId?: string;
  readonly idempotencyKey?: string;
  /** A search attribute, `name=value`. */
  readonly attr?: string;
  readonly limit?: number;
  readonly cursor?: string;
}

/** The list's options as the API's query fields (the server checks each value and says what is wrong). */
function filterOf(
  o: RunListOptions,
): RunListFilter & { status?: RunStatus; limit?: number; cursor?: string } {
  return {
    ...(o.status ? { status: o.status as RunStatus } : {}),
    ...(o.definition ? { definition: o.definition } : {}),
    ...(o.version !== undefined ? { version: o.version } : {}),
    ...(o.startedBefore ? { started_before: o.startedBefore } : {}),
    ...(o.startedAfter ? { started_after: o.startedAfter } : {}),
    ...(o.runId ? { run_id: o.runId } : {}),
    ...(o.idempotencyKey ? { idempotency_key: o.idempotencyKey } : {}),
    ...(o.attr !== undefined ? { attr: attributeFilter(o.attr) } : {}),
    ...(o.limit ? { limit: o.limit } : {}),
    ...(o.cursor ? { cursor: o.cursor } : {}),
  };
}

/** `--attr name=value` as the API's `attr=name:value`. */
function attributeFilter(attr: string): string {
  return attributePair(attr).join(':');
}

/** `weft runs list`: a page of runs, newest first (`--json`: the page as the API answers it). */
export async function listRunsCommand(filter: RunListOptions, o: RemoteOptions): Promise<void> {
  await withClient(o, async (c) => {
    const page = await c.listRuns(filterOf(filter));
    print(page, (p) => {
      if (p.items.length === 0) return 'no runs';
      const rows = table(
        ['RUN', 'DEFINITION', 'STATUS', 'STEPS', 'STARTED', 'TOOK'],
        p.items.map((r) => [
          r.id,
          `${r.definition} v${r.version}`,
          status(r.status),
          r.progress ? `${r.progress.completed}/${r.progress.known}` : '',
          r.created_at,
          elapsed(r.created_at, r.finished_at),
        ]),
      );
      return p.next_cursor ? [rows, color.dim(`more: weft runs list --cursor ${p.next_cursor}`)] : rows;
    });
  });
}

/** JSON as a block of indented lines under a label, in full. */
function block(label: string, value: unknown): string[] {
  const text = JSON.stringify(value, null, 2) ?? 'null';
  return [color.bold(label), ...text.split('\n').map((l) => `  ${l}`)];
}

/** Every field of every attempt, in full: input, output, error with its stack. */
function fullTasks(tasks: readonly Task[]): string[] {
  return tasks.flatMap((t) => [
    '',
    `${color.bold(t.iteration ? `${t.node_id}[${t.iteration}]` : t.node_id)} attempt ${t.attempt}  ${status(t.status)}` +
      `${t.worker ? `  worker ${t.worker}` : ''}${t.finished_at ? `  took ${elapsed(t.started_at, t.finished_at)}` : ''}`,
    ...(t.input !== null ? block('input', t.input) : []),
    ...(t.output !== null ? block('output', t.output) : []),
    ...(t.error ? block('error', t.error) : []),
    ...(t.child_run_id ? [`child run ${t.child_run_id}`] : []),
  ]);
}

function taskTable(tasks: readonly Task[]): string {
  return table(
    ['NODE', 'ATTEMPT', 'STATUS', 'TYPE', 'WORKER', 'TOOK', 'OUTPUT / ERROR'],
    tasks.map((t) => [
      t.iteration ? `${t.node_id}[${t.iteration}]` : t.node_id,
      String(t.attempt),
      status(t.status),
      t.task_type ?? '',
      t.worker ?? '',
      elapsed(t.started_at, t.finished_at),
      t.error
        ? color.red(brief(t.error.message))
        : t.output === null && t.child_run_id
          ? color.dim(`child run ${t.child_run_id}`)
          : brief(t.output),
    ]),
  );
}

function runText(run: RunWithTasks, full: boolean): string[] {
  const lines = [
    `${color.bold('run')}        ${run.id}`,
    `${color.bold('definition')} ${run.definition} v${run.version}`,
  ];
  if (run.archived) lines.push(`${color.bold('archived')}   ${run.archived_at} (read from the archive)`);
  if (run.parent)
    lines.push(
      `${color.bold('parent')}     run ${run.parent.run_id}, node ${run.parent.node_id} attempt ${run.parent.attempt}${run.parent.detached ? ' (detached)' : ''}`,
    );
  lines.push(
    `${color.bold('status')}     ${status(run.status)}${run.finished_at ? ` after ${elapsed(run.created_at, run.finished_at)}` : ''}`,
  );
  const p = run.progress;
  if (p)
    lines.push(
      `${color.bold('progress')}   ${p.completed}/${p.known} steps completed, ${p.running} running, ${p.failed} failed`,
    );
  if (full) {
    lines.push(`${color.bold('started')}    ${run.created_at}`);
    if (run.finished_at) lines.push(`${color.bold('finished')}   ${run.finished_at}`);
    lines.push(...block('input', run.input));
    if (run.output !== null) lines.push(...block('output', run.output));
    if (run.error) lines.push(...block('error', run.error));
    return [...lines, ...fullTasks(run.tasks)];
  }
  lines.push(`${color.bold('input')}      ${brief(run.input, 100)}`);
  if (run.output !== null) lines.push(`${color.bold('output')}     ${brief(run.output, 100)}`);
  if (run.error) lines.push(`${color.bold('error')}      ${color.red(run.error.message)}`);
  return [...lines, '', taskTable(run.tasks)];
}

/** `weft runs show ID [--full]`: the run and its tasks, shortened to a table unless `--full`. */
export async function showRunCommand(
  id: string,
  options: { full?: boolean },
  o: RemoteOptions,
): Promise<void> {
  await withClient(o, async (c) => {
    print(await c.getRun(id), (run) => runText(run, Boolean(options.full)));
  });
}
