import {
  type ClientOptions,
  type Json,
  RunNotCompletedError,
  RunWaitTimeoutError,
  WeftClient,
} from '@weft/client';
import { CliError, EXIT, UsageError } from '../errors.js';
import { jsonOutput, note, print, status } from '../output.js';
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
    print(await c.deploy(source), (d) =>
      d.created
        ? `deployed ${d.name} version ${d.version}`
        : `${d.name} version ${d.version} is already deployed with this content`,
    );
  });
}

/** Parses a JSON value given on the command line; a wrong one is a usage error naming the option. */
export function jsonOption(option: string, text: string): Json {
  try {
    return JSON.parse(text) as Json;
  } catch (e) {
    throw new UsageError(`${option} is not valid JSON: ${(e as Error).message}`);
  }
}

/** How `weft start --wait` waits: as long as the run takes, or at most `timeoutMs`. */
export interface StartWait {
  readonly timeoutMs?: number;
}

/**
 * `weft start NAME --input JSON [--wait]`. With `--wait` it waits for the run to finish and prints its
 * output (`--json`: the run), exiting 0 when it completed and 6 when it failed, was cancelled or was
 * terminated (its error on stderr).
 */
export async function startCommand(
  name: string,
  input: string | undefined,
  version: number | undefined,
  o: RemoteOptions,
  idempotencyKey?: string,
  wait?: StartWait,
  attrs: readonly string[] = [],
): Promise<void> {
  const parsed: Json = input === undefined ? {} : jsonOption('--input', input);
  const attributes = attributesOf(attrs);
  await withClient(o, async (c) => {
    const run = await c.startRun(name, parsed, {
      ...(attrs.length ? { attributes } : {}),
      ...(version ? { version } : {}),
      ...(idempotencyKey ? { idempotencyKey } : {}),
    });
    const said = run.created
      ? `started run ${run.id} of ${run.definition} v${run.version}`
      : `run ${run.id} of ${run.definition} v${run.version} was already started with this key`;
    if (!wait) {
      print(run, () => said);
      return;
    }
    note(said);
    await waitAndPrint(c, run.id, wait);
  });
}

/** One `--attr name=value` as its name and its text; anything else is a usage error saying how to write it. */
export function attributePair(attr: string): [string, string] {
  const at = attr.indexOf('=');
  if (at < 1) throw new UsageError(`--attr ${JSON.stringify(attr)} must be name=value, such as customer=42`);
  return [attr.slice(0, at), attr.slice(at + 1)];
}

/** `name=value` pairs of `--attr`: a number or `true`/`false` stays one, anything else is text. */
export function attributesOf(attrs: readonly string[]): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const attr of attrs) {
    const [name, text] = attributePair(attr);
    const n = Number(text);
    out[name] =
      text === 'true' ? true : text === 'false' ? false : text.trim() !== '' && Number.isFinite(n) ? n : text;
  }
  return out;
}

async function waitAndPrint(c: WeftClient, id: string, wait: StartWait): Promise<void> {
  try {
    const output = await c.result(id, wait.timeoutMs !== undefined ? { timeoutMs: wait.timeoutMs } : {});
    if (jsonOutput()) print(await c.getRun(id), () => undefined);
    else console.log(JSON.stringify(output));
  } catch (e) {
    if (e instanceof RunWaitTimeoutError)
      throw new CliError(
        `run ${id} is still ${e.status} after waiting ${e.timeoutMs} ms; it goes on: follow it with \`weft runs watch ${id}\``,
        EXIT.failure,
        'wait_timeout',
      );
    // A run that did not complete is printed with --json too (its error is in it), then exits 6.
    if (e instanceof RunNotCompletedError && jsonOutput()) print(await c.getRun(id), () => undefined);
    throw e;
  }
}

/** `weft cancel ID`. */
export async function cancelCommand(id: string, reason: string | undefined, o: RemoteOptions): Promise<void> {
  await withClient(o, async (c) => {
    print(
      await c.cancelRun(id, reason, `cli:${process.env.USER ?? 'unknown'}`),
      (run) => `run ${run.id} is ${status(run.status)}`,
    );
  });
}

/** `weft signal RUN NAME --data JSON`. */
export async function signalCommand(
  runId: string,
  name: string,
  options: { data?: string; correlation?: string },
  o: RemoteOptions,
): Promise<void> {
  const data: Json = options.data === undefined ? null : jsonOption('--data', options.data);
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
    print(sent, () => `signal ${name} (${sent.signal_id}) ${what}`);
  });
}
