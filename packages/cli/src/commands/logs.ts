import { type TaskLogEntry, TaskLogsClient, WeftClient } from '@weft/client';
import { brief, color, jsonOutput, print } from '../output.js';
import { clientOptions, type RemoteOptions } from './remote.js';

/** What `weft runs logs` reads. */
export interface LogsOptions {
  readonly node?: string;
  readonly attempt?: number;
  readonly follow?: boolean;
}

const FINISHED = ['completed', 'failed', 'cancelled', 'terminated'];
const PAGE = 1000;
/** How often --follow reads again. */
const FOLLOW_EVERY_MS = 1000;
/**
 * How far back --follow reads again: lines of different attempts are numbered when written and may commit
 * out of that order, so a line numbered below one already shown can still appear for a moment.
 */
const LOOKBACK_MS = 10_000;

function levelText(level: string): string {
  const padded = level.toUpperCase().padEnd(5);
  if (level === 'error') return color.red(padded);
  if (level === 'warn') return color.yellow(padded);
  if (level === 'debug') return color.dim(padded);
  return padded;
}

/** One log line as text: time, level, node and attempt, message and fields. */
export function logLine(l: TaskLogEntry): string {
  const node = l.iteration ? `${l.node_id}[${l.iteration}]` : l.node_id;
  const fields = l.fields === null ? '' : `  ${color.dim(brief(l.fields, 200))}`;
  return `${color.dim(l.at.slice(11, 23))}  ${levelText(l.level)}  ${node} ${color.dim(`#${l.attempt}`)}  ${l.message}${fields}`;
}

/** Lines after `after`, every page of them. */
async function readAll(
  c: TaskLogsClient,
  id: string,
  o: LogsOptions,
  after?: string,
): Promise<TaskLogEntry[]> {
  const lines: TaskLogEntry[] = [];
  let from = after;
  for (;;) {
    const page = await c.read(id, {
      ...(o.node !== undefined ? { node: o.node } : {}),
      ...(o.attempt !== undefined ? { attempt: o.attempt } : {}),
      ...(from !== undefined ? { after: from } : {}),
      limit: PAGE,
    });
    lines.push(...page.lines);
    if (page.next_after === null) return lines;
    from = page.next_after;
  }
}

const show = (l: TaskLogEntry) => print(l, logLine);

/**
 * `weft runs logs RUN`: the lines the run's handlers wrote, oldest first (`--json`: one JSON object per
 * line). With `--follow`, new lines as they come, until the run has finished and its last lines are shown.
 */
export async function logsCommand(id: string, o: LogsOptions, remote: RemoteOptions): Promise<void> {
  const logs = new TaskLogsClient(clientOptions(remote, 1));
  const runs = new WeftClient(clientOptions(remote, 1));
  try {
    if (!o.follow) {
      const lines = await readAll(logs, id, o);
      if (lines.length === 0 && !jsonOutput()) console.error(color.dim(`run ${id} has no log lines`));
      for (const l of lines) show(l);
      return;
    }
    await follow(logs, runs, id, o);
  } finally {
    await Promise.all([logs.close(), runs.close()]);
  }
}

async function follow(logs: TaskLogsClient, runs: WeftClient, id: string, o: LogsOptions): Promise<void> {
  const shown = new Map<string, number>();
  let cursor: string | undefined;
  const stop = new AbortController();
  const onSigint = () => stop.abort();
  process.once('SIGINT', onSigint);
  try {
    for (;;) {
      // Read the run first: once it has finished, lines read after that are its last.
      const finished = FINISHED.includes((await runs.getRun(id)).status);
      const now = Date.now();
      for (const l of await readAll(logs, id, o, cursor)) {
        if (shown.has(l.id)) continue;
        shown.set(l.id, now);
        show(l);
      }
      // Move the cursor past lines shown long enough ago; forget what is behind it.
      for (const [lineId, at] of shown) {
        if (now - at < LOOKBACK_MS) continue;
        if (cursor === undefined || BigInt(lineId) > BigInt(cursor)) cursor = lineId;
      }
      for (const lineId of shown.keys())
        if (cursor !== undefined && BigInt(lineId) <= BigInt(cursor)) shown.delete(lineId);
      if (finished || stop.signal.aborted) return;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, FOLLOW_EVERY_MS);
        stop.signal.addEventListener('abort', () => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  } finally {
    process.off('SIGINT', onSigint);
  }
}
