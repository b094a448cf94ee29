import { type HistoryEvent, type RunWithTasks, type Task, WeftClient } from '@weft/client';
import { EXIT } from '../errors.js';
import { brief, color, elapsed, jsonOutput, print, status, table } from '../output.js';
import { clientOptions, type RemoteOptions, withClient } from './remote.js';

const FINISHED = ['completed', 'failed', 'cancelled', 'terminated'];

/** One history event as a line: sequence, time, type, node and attempt, data. */
export function eventLine(e: HistoryEvent): string {
  const at = e.at.slice(11, 23);
  const where = e.node_id ? ` ${e.iteration ? `${e.node_id}[${e.iteration}]` : e.node_id}` : '';
  const attempt = e.attempt !== null ? color.dim(` #${e.attempt}`) : '';
  const type = e.type.startsWith('run.')
    ? color.bold(e.type)
    : /failed|refused/.test(e.type)
      ? color.red(e.type)
      : e.type === 'task.completed'
        ? color.green(e.type)
        : e.type;
  const data = brief(e.data, 80);
  return `${String(e.seq).padStart(5)}  ${color.dim(at)}  ${type}${where}${attempt}${data === '{}' ? '' : `  ${color.dim(data)}`}`;
}

/** The latest attempt of every node of the run, in the definition's order; nodes not reached show a dash. */
function nodeTable(run: RunWithTasks, order: readonly string[]): string {
  const latest = new Map<string, Task>();
  for (const t of run.tasks) {
    const key = t.iteration ? `${t.node_id}[${t.iteration}]` : t.node_id;
    const seen = latest.get(key);
    if (!seen || seen.attempt < t.attempt) latest.set(key, t);
  }
  const keys = [...latest.keys()];
  const rank = (k: string) => {
    const i = order.indexOf(k.replace(/\[.*$/, ''));
    return i < 0 ? order.length : i;
  };
  for (const id of order) if (!keys.some((k) => k === id || k.startsWith(`${id}[`))) keys.push(id);
  keys.sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
  return table(
    ['NODE', 'ATTEMPT', 'STATUS', 'WORKER', 'TOOK', 'OUTPUT / ERROR'],
    keys.map((k) => {
      const t = latest.get(k);
      if (!t) return [k, '', color.dim('not started'), '', '', ''];
      return [
        k,
        String(t.attempt),
        status(t.status),
        t.worker ?? '',
        elapsed(t.started_at, t.finished_at),
        t.error ? color.red(brief(t.error.message)) : brief(t.output),
      ];
    }),
  );
}

/**
 * `weft runs watch ID`: the run's nodes and its history as it happens, from the live SSE stream (which
 * resumes by itself if the connection drops). In a terminal the view is redrawn in place; otherwise
 * each new event is printed as a line and the nodes at the end (`--json`: one line `{"event": ...}` per
 * event, then `{"run": ...}`). Stops when the run has finished and every event has been shown (unless
 * --follow), or on Ctrl-C; exits 6 when the run did not complete.
 */
export async function watchCommand(id: string, o: { follow: boolean }, remote: RemoteOptions): Promise<void> {
  const c = new WeftClient(clientOptions(remote, 3));
  const tty = Boolean(process.stdout.isTTY) && !jsonOutput();
  const abort = new AbortController();
  const stop = () => abort.abort();
  process.once('SIGINT', stop);
  try {
    let run = await c.getRun(id);
    const order = await c
      .getDefinitionVersion(run.definition, run.version)
      .then((d) => ((d.definition as { nodes?: { id: string }[] }).nodes ?? []).map((n) => n.id))
      .catch(() => [] as string[]);
    const events: HistoryEvent[] = [];
    let lastSeq = 0;
    const draw = () => {
      if (!tty) return;
      const rows = process.stdout.rows ?? 40;
      const nodes = nodeTable(run, order);
      const room = Math.max(3, rows - nodes.split('\n').length - 7);
      const head = [
        `${color.bold('run')} ${run.id}  ${run.definition} v${run.version}  ${status(run.status)}` +
          (run.finished_at ? `  after ${elapsed(run.created_at, run.finished_at)}` : ''),
        run.error
          ? color.red(run.error.message)
          : color.dim(o.follow ? 'following (Ctrl-C to stop)' : 'Ctrl-C to stop'),
      ];
      const lines = events.slice(-room).map(eventLine);
      process.stdout.write(
        `\x1b[H\x1b[J${[...head, '', nodes, '', color.bold('HISTORY'), ...lines].join('\n')}\n`,
      );
    };
    let refreshing: Promise<void> | null = null;
    const refresh = () => {
      refreshing ??= (async () => {
        try {
          run = await c.getRun(id);
          draw();
          if (!o.follow && FINISHED.includes(run.status)) {
            // Finished: stop once the stream has shown every event there is.
            const rest = await c.history(id, lastSeq, 1);
            if (rest.events.length === 0) abort.abort();
          }
        } catch {
          // the next refresh tries again
        } finally {
          refreshing = null;
        }
      })();
    };
    if (tty) process.stdout.write('\x1b[?25l');
    const timer = setInterval(refresh, 1000);
    try {
      refresh();
      for await (const e of c.streamHistory(id, { signal: abort.signal })) {
        events.push(e);
        lastSeq = e.seq;
        if (jsonOutput()) print({ event: e }, () => undefined);
        else if (!tty) console.log(eventLine(e));
        refresh();
      }
    } finally {
      clearInterval(timer);
      await refreshing;
      if (tty) process.stdout.write('\x1b[?25h');
    }
    run = await c.getRun(id);
    if (jsonOutput()) print({ run }, () => undefined);
    else if (tty) draw();
    else {
      console.log('');
      console.log(nodeTable(run, order));
    }
    if (!jsonOutput()) console.log(`run ${run.id} is ${status(run.status)}`);
    // A script watching a run learns how it ended from the exit code (stopped early with Ctrl-C: the
    // status it had then).
    if (run.status !== 'completed') process.exitCode = EXIT.runNotCompleted;
  } finally {
    process.off('SIGINT', stop);
    await c.close();
  }
}

/** `weft runs history ID`: the run's events, a page at a time (all pages with --all). */
export async function historyCommand(
  id: string,
  o: { after: number; limit: number; all: boolean },
  remote: RemoteOptions,
): Promise<void> {
  await withClient(remote, async (c) => {
    let after: number | null = o.after;
    do {
      const page = await c.history(id, after, o.limit);
      after = page.next_after;
      const more = after !== null && !o.all;
      print(page, (p) => [
        ...p.events.map(eventLine),
        ...(more ? [color.dim(`more: weft runs history ${id} --after ${after}`)] : []),
      ]);
      if (more) return;
    } while (after !== null);
  });
}
