import { createHash } from 'node:crypto';
import { type Json, matchTrigger, WeftError } from '@weft/core';
import type { RunRecord, StartRequest } from '../store/records.js';
import { type StartDeps, startBatch } from './starts.js';

/** An event sent to Weft (`POST /v1/events`, `weft emit`): it starts every definition that listens for it. */
export interface EmitRequest {
  readonly namespace: string;
  /** The event name, matched against the definitions' `triggers`. */
  readonly name: string;
  /** The sender's id for this event: a repeat with the same id starts nothing new. */
  readonly id: string;
  readonly data: Json;
  /** Who sent it (an API key's name): recorded with each run's start. */
  readonly by?: string;
}

/** A run an event started, or had already started for the same event id. */
export interface EmittedRun {
  readonly definition: string;
  readonly version: number;
  readonly run: RunRecord;
  /** False when an earlier event with the same id (or idempotency key) started it. */
  readonly created: boolean;
}

/** A definition whose trigger matched but could not start a run (a mapping failed, the input was refused). */
export interface EmitFailure {
  readonly definition: string;
  readonly version: number;
  readonly error: WeftError;
}

/** What an event started. */
export interface EmitOutcome {
  readonly runs: readonly EmittedRun[];
  readonly failures: readonly EmitFailure[];
}

/** Longest part of an idempotency key taken as it is; a longer value is hashed. */
const MAX_KEY_PART = 300;

/**
 * Events that start runs. An event starts the latest version of every definition of its namespace with a
 * trigger on its name whose filter holds, all in one transaction (`startBatch`), at most once per event id
 * and definition: each start carries the idempotency key `event:<definition>:<key>` (the key is the event
 * id, or the trigger's idempotency expression), so a repeat, or the same event sent at once from several
 * connections, shares the run the first start made (invariant 11; test "the same event sent at once from
 * eight connections starts one run per matching definition").
 */
export class EventService {
  constructor(private readonly ctx: StartDeps) {}

  /** Starts what `event` triggers; answers every run started (or already started) and every failure. */
  async emit(event: EmitRequest): Promise<EmitOutcome> {
    const definitions = await this.ctx.store.listTriggeredDefinitions(event.namespace, event.name);
    const now = new Date();
    const starts: { definition: string; version: number; request: StartRequest }[] = [];
    const failures: EmitFailure[] = [];
    for (const d of definitions) {
      for (const trigger of d.definition.triggers ?? []) {
        const matched = await matchTrigger(trigger, event, now);
        if (!matched.ok) {
          const message = `trigger on "${event.name}" of ${d.name} v${d.version}: ${matched.error}; fix the trigger or the event's data`;
          failures.push({
            definition: d.name,
            version: d.version,
            error: new WeftError('trigger_failed', message, 400),
          });
          break;
        }
        if (!matched.value) continue;
        // One run per (event, definition): the first trigger that matches starts it.
        starts.push({
          definition: d.name,
          version: d.version,
          request: {
            namespace: event.namespace,
            definition: d.name,
            version: d.version,
            input: matched.value.input,
            idempotencyKey: `event:${d.name}:${keyPart(matched.value.key)}`,
            by: event.by ?? `event ${event.name}`,
          },
        });
        break;
      }
    }
    if (starts.length === 0) return { runs: [], failures };
    const results = await startBatch(
      this.ctx,
      starts.map((s) => s.request),
    );
    const runs: EmittedRun[] = [];
    for (const [i, result] of results.entries()) {
      const { definition, version } = starts[i]!;
      if (result.ok) runs.push({ definition, version, ...result.outcome });
      else failures.push({ definition, version, error: asWeftError(result.error) });
    }
    return { runs, failures };
  }
}

function keyPart(key: string): string {
  return key.length <= MAX_KEY_PART ? key : `sha256:${createHash('sha256').update(key).digest('hex')}`;
}

/**
 * A start's own error as a failure of the answer. The other starts of the event have committed by then, so
 * even an unexpected error is answered beside them rather than thrown (a retry with the same id would
 * answer the same runs).
 */
function asWeftError(error: unknown): WeftError {
  if (error instanceof WeftError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new WeftError('start_failed', `the run could not start: ${message}; send the event again`, 500);
}
