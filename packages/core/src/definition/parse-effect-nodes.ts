import type { MappingSource } from '../expr/mapping.js';
import { isJsonObject } from '../json.js';
import { describeLocated } from './located.js';
import {
  type EffectNode,
  HTTP_METHODS,
  type NodeCommon,
  type RetryPolicy,
  type StatusMatch,
} from './node-types.js';
import { readTaskGates } from './parse-limits.js';
import { readRetry } from './parse-retry.js';
import { MAX_DURATION_MS, NAME_PATTERN, SINK_NAME_PATTERN } from './patterns.js';
import type { MapReader } from './reader.js';
import type { CallbackStatus, StatusCallback } from './types.js';

const DEFAULT_HTTP_TIMEOUT_MS = 30_000;
const CALLBACK_STATUSES: readonly CallbackStatus[] = ['completed', 'failed', 'cancelled', 'terminated'];

/** What the reader of an effect node takes from the definition's defaults. */
export interface EffectNodeDefaults {
  readonly retry: RetryPolicy;
  readonly priority: number;
}

/** Reads a `sub_workflow`, `start_workflow`, `event` or `http` node; undefined when a required field is bad. */
export function readEffectNode(
  kind: EffectNode['kind'],
  r: MapReader,
  common: NodeCommon,
  defaults: EffectNodeDefaults,
): EffectNode | undefined {
  switch (kind) {
    case 'sub_workflow': {
      const target = readTarget(r);
      // A child is a whole run: retrying it is a choice the node makes, not a default it inherits.
      const retry = readRetry(r, { ...defaults.retry, maxAttempts: 1 });
      const timeoutMs = r.duration('timeout', { minMs: 1, maxMs: MAX_DURATION_MS }) ?? null;
      r.done(
        'a sub_workflow node (expected id, kind, description, join, definition, version, input, retry, timeout)',
      );
      if (!target) return undefined;
      return { ...common, kind, ...target, retry, timeoutMs };
    }
    case 'start_workflow': {
      const target = readTarget(r);
      r.done('a start_workflow node (expected id, kind, description, join, definition, version, input)');
      if (!target) return undefined;
      return { ...common, kind, ...target };
    }
    case 'event': {
      const sink = r.string('sink', {
        required: true,
        pattern: SINK_NAME_PATTERN,
        patternHint: 'is not a valid sink name: use letters, digits, ".", "_" and "-"',
      });
      const topic = r.string('topic') ?? null;
      const payload = r.json('payload');
      r.done('an event node (expected id, kind, description, join, sink, topic, payload)');
      if (sink === undefined) return undefined;
      return { ...common, kind, sink, topic, payload: payload === undefined ? null : payload };
    }
    case 'http': {
      const url = r.string('url', { required: true });
      const method = r.oneOf('method', HTTP_METHODS) ?? 'GET';
      const headers = r.json('headers');
      if (headers !== undefined && headers !== null && !isJsonObject(headers))
        r.problem('must be a map of header names to expressions', r.lineOf('headers'), 'headers');
      const body = r.json('body');
      const timeoutMs = r.duration('timeout', { minMs: 1, maxMs: 3_600_000 }) ?? DEFAULT_HTTP_TIMEOUT_MS;
      const success = readSuccess(r);
      const retry = readRetry(r, defaults.retry);
      const priority = r.integer('priority', { min: -1000, max: 1000 }) ?? defaults.priority;
      const gates = readTaskGates(r);
      r.done(
        'an http node (expected id, kind, description, join, url, method, headers, body, timeout, success, retry, priority, semaphores, rate_limit)',
      );
      if (url === undefined || success === undefined) return undefined;
      return {
        ...common,
        kind,
        url,
        method,
        headers: isJsonObject(headers) ? headers : null,
        body: body === undefined ? null : (body as MappingSource),
        timeoutMs,
        success,
        retry,
        priority,
        ...gates,
      };
    }
  }
}

function readTarget(
  r: MapReader,
): { definition: string; version: number | null; input: MappingSource | null } | undefined {
  const definition = r.string('definition', {
    required: true,
    pattern: NAME_PATTERN,
    patternHint: 'is not a valid definition name: use letters, digits, ".", "_" and "-"',
  });
  const version = r.integer('version', { min: 1 }) ?? null;
  const input = r.json('input');
  if (definition === undefined) return undefined;
  return { definition, version, input: input === undefined ? null : input };
}

const STATUS_CLASS = /^[1-5]xx$/;

function readSuccess(r: MapReader): readonly StatusMatch[] | undefined {
  const entry = r.entry('success');
  if (!entry) return ['2xx'];
  const items = entry.value.kind === 'seq' ? entry.value.items : [entry.value];
  const out: StatusMatch[] = [];
  for (const item of items) {
    const v = item.kind === 'scalar' ? item.value : undefined;
    if (typeof v === 'number' && Number.isInteger(v) && v >= 100 && v <= 599) out.push(v);
    else if (typeof v === 'string' && STATUS_CLASS.test(v)) out.push(v as StatusMatch);
    else {
      r.problem(
        `must list status codes (such as 200) or classes (such as 2xx), not ${describeLocated(item)}`,
        item.line,
        'success',
      );
      return undefined;
    }
  }
  if (out.length === 0) {
    r.problem('must list at least one status code', entry.line, 'success');
    return undefined;
  }
  return out;
}

/**
 * Reads a definition's `on_status`: `{url: ..., statuses: [...]}` or `{sink: ..., statuses: [...]}`. The
 * statuses default to completed, failed and cancelled.
 */
export function readStatusCallback(top: MapReader): StatusCallback | null {
  const r = top.map('on_status');
  if (!r) return null;
  const url = r.string('url');
  const sink = r.string('sink', {
    pattern: SINK_NAME_PATTERN,
    patternHint: 'is not a valid sink name: use letters, digits, ".", "_" and "-"',
  });
  let statuses: CallbackStatus[] = ['completed', 'failed', 'cancelled'];
  const entry = r.entry('statuses');
  if (entry) {
    const items = entry.value.kind === 'seq' ? entry.value.items : [];
    const chosen = items.map((i) => (i.kind === 'scalar' ? i.value : undefined));
    if (
      entry.value.kind !== 'seq' ||
      chosen.length === 0 ||
      !chosen.every((s) => typeof s === 'string' && (CALLBACK_STATUSES as readonly string[]).includes(s))
    ) {
      r.problem(
        `must be a list of run statuses from ${CALLBACK_STATUSES.join(', ')}`,
        entry.line,
        'statuses',
      );
    } else statuses = chosen as CallbackStatus[];
  }
  r.done('on_status (expected url or sink, and statuses)');
  if (url !== undefined && sink !== undefined) {
    r.problem('give either url or sink, not both');
    return null;
  }
  if (url !== undefined) {
    if (!/^https?:\/\/\S+$/i.test(url)) {
      r.problem(`${JSON.stringify(url)} is not an http or https URL`, r.lineOf('url'), 'url');
      return null;
    }
    return { kind: 'url', url, statuses };
  }
  if (sink !== undefined) return { kind: 'sink', sink, statuses };
  r.problem('needs a url (a webhook) or a sink (configured on the server)');
  return null;
}
