import { SINK_NAME_PATTERN, WeftError } from '@weft/core';

/** Settings every kind of sink takes. */
interface SinkCommon {
  /** Namespaces whose human task changes this sink hears of (`*`: every namespace); none by default. */
  readonly humanTasks?: readonly string[];
}

/** A sink configured on the server, named by `event` nodes (`sink: <name>`) and status callbacks. */
export type SinkConfig = SinkCommon &
  /** Appends to a Redis stream (XADD); `topic` overrides the stream key. */
  (
    | {
        readonly kind: 'redis';
        readonly name: string;
        readonly url: string;
        readonly stream: string;
        readonly maxLen: number;
      }
    /** Publishes on a NATS subject, through JetStream (acknowledged, deduplicated by id) by default. */
    | {
        readonly kind: 'nats';
        readonly name: string;
        readonly url: string;
        readonly subject: string;
        readonly jetstream: boolean;
      }
    /** Publishes to a RabbitMQ exchange (the default exchange when empty) with publisher confirms. */
    | {
        readonly kind: 'amqp';
        readonly name: string;
        readonly url: string;
        readonly exchange: string;
        readonly routingKey: string;
      }
    /** POSTs JSON to a URL, signed with HMAC-SHA256 when a secret is given. */
    | {
        readonly kind: 'webhook';
        readonly name: string;
        readonly url: string;
        readonly secret?: string;
        readonly timeoutMs: number;
      }
  );

/**
 * Reads sink settings: a JSON object of sink name to settings, as in
 * `{"orders": {"kind": "redis", "url": "redis://127.0.0.1:6379", "stream": "orders"}}`. A webhook's secret
 * is best given as `secret_env` (the name of an environment variable) so it stays out of files.
 * Every problem is reported at once, naming the sink and the field.
 */
export function parseSinks(value: unknown, env: NodeJS.ProcessEnv = process.env): SinkConfig[] {
  if (value === undefined || value === null) return [];
  if (typeof value !== 'object' || Array.isArray(value))
    throw bad(['sinks must be a JSON object of sink names to their settings']);
  const problems: string[] = [];
  const out: SinkConfig[] = [];
  for (const [name, raw] of Object.entries(value as Record<string, unknown>)) {
    const where = `sink "${name}"`;
    if (!SINK_NAME_PATTERN.test(name)) {
      problems.push(`${where}: the name must use letters, digits, ".", "_" and "-"`);
      continue;
    }
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
      problems.push(`${where}: settings must be an object with a "kind"`);
      continue;
    }
    const s = raw as Record<string, unknown>;
    const text = (key: string, fallback?: string): string | undefined => {
      const v = s[key];
      if (v === undefined) {
        if (fallback === undefined) problems.push(`${where}: "${key}" is required`);
        return fallback;
      }
      if (typeof v !== 'string') {
        problems.push(`${where}: "${key}" must be text`);
        return undefined;
      }
      return v;
    };
    const known = (keys: string[]) => {
      for (const k of Object.keys(s))
        if (!keys.includes(k) && k !== 'human_tasks')
          problems.push(`${where}: unknown setting "${k}" (expected ${keys.join(', ')})`);
    };
    switch (s.kind) {
      case 'redis': {
        known(['kind', 'url', 'stream', 'max_len']);
        const url = text('url', 'redis://127.0.0.1:6379');
        const stream = text('stream', name);
        const maxLen = s.max_len === undefined ? 100_000 : Number(s.max_len);
        if (!Number.isInteger(maxLen) || maxLen < 1)
          problems.push(`${where}: "max_len" must be a positive integer`);
        if (url && stream) out.push({ kind: 'redis', name, url, stream, maxLen });
        break;
      }
      case 'nats': {
        known(['kind', 'url', 'subject', 'jetstream']);
        const url = text('url', 'nats://127.0.0.1:4222');
        const subject = text('subject', name);
        if (s.jetstream !== undefined && typeof s.jetstream !== 'boolean')
          problems.push(`${where}: "jetstream" must be true or false`);
        if (url && subject) out.push({ kind: 'nats', name, url, subject, jetstream: s.jetstream !== false });
        break;
      }
      case 'amqp': {
        known(['kind', 'url', 'exchange', 'routing_key']);
        const url = text('url', 'amqp://guest:guest@127.0.0.1:5672');
        const exchange = text('exchange', '');
        const routingKey = text('routing_key', name);
        if (url && exchange !== undefined && routingKey !== undefined)
          out.push({ kind: 'amqp', name, url, exchange, routingKey });
        break;
      }
      case 'webhook': {
        known(['kind', 'url', 'secret', 'secret_env', 'timeout_ms']);
        const url = text('url');
        if (url && !/^https?:\/\/\S+$/i.test(url))
          problems.push(`${where}: "url" must be an http or https URL`);
        let secret = typeof s.secret === 'string' ? s.secret : undefined;
        if (typeof s.secret_env === 'string') {
          secret = env[s.secret_env];
          if (!secret)
            problems.push(`${where}: the environment variable ${s.secret_env} (secret_env) is not set`);
        }
        const timeoutMs = s.timeout_ms === undefined ? 10_000 : Number(s.timeout_ms);
        if (!Number.isInteger(timeoutMs) || timeoutMs < 1)
          problems.push(`${where}: "timeout_ms" must be a positive integer`);
        if (url) out.push({ kind: 'webhook', name, url, timeoutMs, ...(secret ? { secret } : {}) });
        break;
      }
      default:
        problems.push(`${where}: "kind" must be one of redis, nats, amqp, webhook`);
    }
    const humanTasks = readHumanTasks(s.human_tasks, where, problems);
    const last = out[out.length - 1];
    if (humanTasks && last?.name === name) out[out.length - 1] = { ...last, humanTasks };
  }
  if (problems.length > 0) throw bad(problems);
  return out;
}

const NAMESPACE = /^[a-z0-9][a-z0-9_-]{0,62}$/;

/** A sink's `human_tasks`: the namespaces (or `*`) whose human task changes it hears of. */
function readHumanTasks(value: unknown, where: string, problems: string[]): string[] | undefined {
  if (value === undefined) return undefined;
  if (
    !Array.isArray(value) ||
    !value.every((v) => typeof v === 'string' && (v === '*' || NAMESPACE.test(v)))
  ) {
    problems.push(`${where}: "human_tasks" must be a list of namespaces, or ["*"] for every namespace`);
    return undefined;
  }
  return value as string[];
}

/**
 * Which sinks hear of human task changes, per namespace, as the engine takes it
 * (`EngineOptions.humanTaskSinks`): from each sink's `human_tasks`.
 */
export function humanTaskSinksOf(sinks: readonly SinkConfig[]): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const sink of sinks)
    for (const ns of sink.humanTasks ?? []) {
      const names = out[ns] ?? [];
      names.push(sink.name);
      out[ns] = names;
    }
  return out;
}

function bad(problems: string[]): WeftError {
  return new WeftError(
    'bad_sinks',
    `the sink settings have ${problems.length} problem(s):\n${problems.join('\n')}`,
    400,
  );
}
