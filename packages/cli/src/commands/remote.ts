import { type ClientOptions, type Json, type RunStatus, WeftClient } from '@weft/client';
import { CliError } from '../errors.js';
import { brief, color, elapsed, status, table } from '../output.js';
import { readSource } from './local.js';

/** Options every command that talks to a server takes. */
export interface RemoteOptions {
  readonly url: string;
  readonly namespace: string;
  /** The API key; WEFT_API_KEY when not given. */
  readonly apiKey?: string;
  /** Extra headers, as `name: value`. */
  readonly header?: readonly string[];
}

/** The client settings for a command: where, which namespace, which key, which extra headers. */
export function clientOptions(o: RemoteOptions, connections: number): ClientOptions {
  const headers: Record<string, string> = {};
  for (const h of o.header ?? []) {
    const at = h.indexOf(':');
    if (at < 1) throw new CliError(`--header ${JSON.stringify(h)} must be "name: value"`);
    headers[h.slice(0, at).trim()] = h.slice(at + 1).trim();
  }
  return {
    url: o.url,
    namespace: o.namespace,
    connections,
    ...(o.apiKey ? { apiKey: o.apiKey } : {}),
    ...(Object.keys(headers).length > 0 ? { headers } : {}),
  };
}

/** A client for the server the options name. */
export function client(o: RemoteOptions): WeftClient {
  return new WeftClient(clientOptions(o, 2));
}

/** Runs `fn` with a client, closing it afterwards. */
export async function withClient<T>(o: RemoteOptions, fn: (c: WeftClient) => Promise<T>): Promise<T> {
  const c = client(o);
  try {
    return await fn(c);
  } finally {
    await c.close();
  }
}

/** `weft deploy FILE`. */
export async function deployCommand(file: string, o: RemoteOptions): Promise<void> {
  const source = await readSource(file);
  await withClient(o, async (c) => {
    const d = await c.deploy(source);
    console.log(
      d.created
        ? `deployed ${d.name} version ${d.version}`
        : `${d.name} version ${d.version} is already deployed with this content`,
    );
  });
}

/** `weft start NAME --input JSON`. */
export async function startCommand(
  name: string,
  input: string | undefined,
  version: number | undefined,
  o: RemoteOptions,
  idempotencyKey?: string,
): Promise<void> {
  let parsed: Json = {};
  if (input !== undefined) {
    try {
      parsed = JSON.parse(input) as Json;
    } catch (e) {
      throw new CliError(`--input is not valid JSON: ${(e as Error).message}`);
    }
  }
  await withClient(o, async (c) => {
    const run = await c.startRun(name, parsed, {
      ...(version ? { version } : {}),
      ...(idempotencyKey ? { idempotencyKey } : {}),
    });
    console.log(
      run.created
        ? `started run ${run.id} of ${run.definition} v${run.version}`
        : `run ${run.id} of ${run.definition} v${run.version} was already started with this key`,
    );
  });
}

/** `weft runs list`. */
export async function listRunsCommand(
  filter: { status?: string; definition?: string; limit?: number; cursor?: string },
  o: RemoteOptions,
): Promise<void> {
  await withClient(o, async (c) => {
    const page = await c.listRuns({
      ...(filter.status ? { status: filter.status as RunStatus } : {}),
      ...(filter.definition ? { definition: filter.definition } : {}),
      ...(filter.limit ? { limit: filter.limit } : {}),
      ...(filter.cursor ? { cursor: filter.cursor } : {}),
    });
    if (page.items.length === 0) {
      console.log('no runs');
      return;
    }
    console.log(
      table(
        ['RUN', 'DEFINITION', 'STATUS', 'STEPS', 'STARTED', 'TOOK'],
        page.items.map((r) => [
          r.id,
          `${r.definition} v${r.version}`,
          status(r.status),
          r.progress ? `${r.progress.completed}/${r.progress.known}` : '',
          r.created_at,
          elapsed(r.created_at, r.finished_at),
        ]),
      ),
    );
    if (page.next_cursor) console.log(color.dim(`more: weft runs list --cursor ${page.next_cursor}`));
  });
}

/** `weft runs show ID`: the run and a table of its tasks. */
export async function showRunCommand(id: string, o: RemoteOptions): Promise<void> {
  await withClient(o, async (c) => {
    const run = await c.getRun(id);
    console.log(`${color.bold('run')}        ${run.id}`);
    console.log(`${color.bold('definition')} ${run.definition} v${run.version}`);
    if (run.parent)
      console.log(
        `${color.bold('parent')}     run ${run.parent.run_id}, node ${run.parent.node_id} attempt ${run.parent.attempt}${run.parent.detached ? ' (detached)' : ''}`,
      );
    console.log(
      `${color.bold('status')}     ${status(run.status)}${run.finished_at ? ` after ${elapsed(run.created_at, run.finished_at)}` : ''}`,
    );
    const p = run.progress;
    if (p)
      console.log(
        `${color.bold('progress')}   ${p.completed}/${p.known} steps completed, ${p.running} running, ${p.failed} failed`,
      );
    console.log(`${color.bold('input')}      ${brief(run.input, 100)}`);
    if (run.output !== null) console.log(`${color.bold('output')}     ${brief(run.output, 100)}`);
    if (run.error) console.log(`${color.bold('error')}      ${color.red(run.error.message)}`);
    console.log('');
    console.log(
      table(
        ['NODE', 'ATTEMPT', 'STATUS', 'TYPE', 'WORKER', 'TOOK', 'OUTPUT / ERROR'],
        run.tasks.map((t) => [
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
      ),
    );
  });
}

/** `weft cancel ID`. */
export async function cancelCommand(id: string, reason: string | undefined, o: RemoteOptions): Promise<void> {
  await withClient(o, async (c) => {
    const run = await c.cancelRun(id, reason, `cli:${process.env.USER ?? 'unknown'}`);
    console.log(`run ${run.id} is ${status(run.status)}`);
  });
}

/** `weft signal RUN NAME --data JSON`. */
export async function signalCommand(
  runId: string,
  name: string,
  options: { data?: string; correlation?: string },
  o: RemoteOptions,
): Promise<void> {
  let data: Json = null;
  if (options.data !== undefined) {
    try {
      data = JSON.parse(options.data) as Json;
    } catch (e) {
      throw new CliError(`--data is not valid JSON: ${(e as Error).message}`);
    }
  }
  await withClient(o, async (c) => {
    const sent = await c.signal(runId, name, data, {
      ...(options.correlation !== undefined ? { correlation: options.correlation } : {}),
      by: `cli:${process.env.USER ?? 'unknown'}`,
    });
    const node = sent.iteration ? `${sent.node_id}[${sent.iteration}]` : sent.node_id;
    const what =
      sent.outcome === 'delivered'
        ? `delivered to node ${node}`
        : sent.outcome === 'kept'
          ? `kept: no node waits for it yet; the next one that waits for "${name}" takes it`
          : 'queued: the run is paused; it is decided when the run resumes';
    console.log(`signal ${name} (${sent.signal_id}) ${what}`);
  });
}
