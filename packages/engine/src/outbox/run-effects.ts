import { checkSchema, type Json, type RunEvent } from '@weft/core';
import type { Evaluator } from '../decisions/evaluator.js';
import type { PayloadStore } from '../payloads/payload-store.js';
import type { DefinitionService } from '../services/definitions.js';
import type { RunIndex } from '../services/run-index.js';
import {
  type Delivery,
  type OutboxPayload,
  type OutboxRow,
  RUNS_DESTINATION,
} from '../store/outbox-records.js';
import type { NewRun } from '../store/store.js';
import { fault } from '../support/faults.js';
import { type DeliveryContext, type Destination, failureOf } from './destination.js';

type StartRun = Extract<OutboxPayload, { kind: 'start_run' }>;

/** What delivering effects on runs uses: definitions to start children from, and the decider. */
export interface RunEffectsDeps {
  readonly definitions: Pick<DefinitionService, 'resolve'>;
  readonly payloads: PayloadStore;
  readonly runs: RunIndex;
  readonly evaluator: Evaluator;
}

/**
 * The destination for effects on other runs. They are PostgreSQL writes, so they are delivered inside
 * the relay's transaction and commit with the rows' marks: a child start happens exactly when its row is
 * marked, and a redelivered start (a replayed dead letter) is absorbed by the child's primary key.
 *
 * Lock order, within the relay's transaction: decide-queue rows first (wake-ups and cancels, one sorted
 * upsert), then the parents' task rows (`FOR SHARE`), then rows of the new child runs, which no one else
 * can see yet. That is the engine's order (run rows, decide-queue rows, queue, tasks), and the relay takes
 * no existing run row at all.
 */
export function runEffectsDestination(ctx: RunEffectsDeps): Destination {
  return {
    name: RUNS_DESTINATION,
    async deliver(rows, context) {
      const out = new Map<OutboxRow, Delivery>();
      await wakeAndCancel(context, rows, out);
      await startRuns(ctx, context, rows, out);
      return rows.map(
        (row) => out.get(row) ?? { kind: 'failed', error: `unknown effect ${row.payload.kind}` },
      );
    },
  };
}

/**
 * Wake-ups (a child ended: its event is already in the parent's inbox) and cancel cascades (a parent
 * ended while this child ran) become decide-queue requests, plus the cancel event in the child's inbox.
 * A cancel for a run that does not exist is done: its start saw the cancelled parent and skipped it.
 */
async function wakeAndCancel(
  { tx }: DeliveryContext,
  rows: readonly OutboxRow[],
  out: Map<OutboxRow, Delivery>,
): Promise<void> {
  const wakes = rows.filter((r) => r.payload.kind === 'wake_run');
  const cancels = rows.filter((r) => r.payload.kind === 'cancel_run');
  if (wakes.length === 0 && cancels.length === 0) return;
  const cancelTargets = cancels.map(
    (r) => (r.payload as Extract<OutboxPayload, { kind: 'cancel_run' }>).runId,
  );
  const existing = new Set(cancelTargets.length > 0 ? await tx.existingRuns(cancelTargets) : []);
  const events: { runId: string; event: RunEvent }[] = [];
  for (const row of cancels) {
    const p = row.payload as Extract<OutboxPayload, { kind: 'cancel_run' }>;
    if (!existing.has(p.runId)) continue;
    const kind = p.mode === 'terminate' ? 'run_terminated' : 'run_cancelled';
    events.push({ runId: p.runId, event: { kind, by: p.by, reason: p.reason } });
  }
  const targets = [
    ...events.map((e) => e.runId),
    ...wakes.map((r) => (r.payload as Extract<OutboxPayload, { kind: 'wake_run' }>).runId),
  ];
  await tx.requestDecisions(targets, 'outbox');
  await tx.appendInbox(events);
  for (const row of [...wakes, ...cancels]) out.set(row, { kind: 'delivered' });
}

/**
 * Starts child runs. An attached child (sub_workflow) starts only while the attempt that asked for it is
 * still running, checked under a share lock on that attempt's row: a cancel or timeout of the attempt
 * either happened before (the start is skipped) or waits for this transaction and then sees the child to
 * cascade to (test: "a cancel racing a child start leaves no orphan"). A definition that is not deployed
 * is a failed delivery that backs off (deploy order); an input the child's schema refuses fails the
 * attempt (attached) or dead-letters the row (detached). The child runs in the namespace of the run that
 * started it (the row's namespace): its definition is looked up there, and it counts against that
 * namespace's quota without being refused by it (it belongs to work the quota already admitted).
 */
async function startRuns(
  ctx: RunEffectsDeps,
  { tx, pass }: DeliveryContext,
  rows: readonly OutboxRow[],
  out: Map<OutboxRow, Delivery>,
): Promise<void> {
  const starts = rows.filter((r) => r.payload.kind === 'start_run');
  if (starts.length === 0) return;
  const attached = starts.map((r) => r.payload as StartRun).filter((p) => !p.detached);
  const parents = await tx.lockParentTasks(attached.map((p) => p.parent));
  if (attached.length > 0) await fault('relay.after-parent-check');
  const running = new Set(parents.filter((p) => p.running).map((p) => parentKey(p)));
  const toInsert: NewRun[] = [];
  const refusals: { runId: string; namespace: string; childRunId: string; event: RunEvent }[] = [];
  for (const row of starts) {
    const p = row.payload as StartRun;
    if (!p.detached && !running.has(parentKey(p.parent))) {
      out.set(row, { kind: 'delivered' }); // the attempt is over: nothing is waiting for this child
      continue;
    }
    try {
      const { record, workflow } = await ctx.definitions.resolve(
        p.namespace,
        p.definition,
        p.version ?? undefined,
      );
      const schema = workflow.definition.inputSchema;
      const check = schema ? checkSchema(schema, p.input) : null;
      if (check && !check.ok) {
        const message = `the input does not match the input_schema of ${record.name} v${record.version}: ${check.error}`;
        if (p.detached) {
          out.set(row, { kind: 'failed', error: message, permanent: true });
        } else {
          refusals.push({
            runId: p.parent.runId,
            namespace: p.namespace,
            childRunId: p.runId,
            event: refusedChild(p, message),
          });
          out.set(row, { kind: 'delivered' });
        }
        continue;
      }
      const input = await ctx.payloads.offload(p.input, 'a child run input', { enforceMax: false });
      // Guarded by the pass before it writes (invariant 30).
      pass.blobUses.note(p.runId, input, p.input);
      toInsert.push({
        id: p.runId,
        namespace: p.namespace,
        definitionId: record.id,
        definitionName: record.name,
        definitionVersion: record.version,
        // The row carries the value (the outbox is read outside the engine too); the child's run row
        // keeps a large one in the blob store like any run input, and its decisions fetch it back.
        input,
        parent: { ...p.parent, detached: p.detached },
        startKey: childStartKey(p.parent),
      });
      out.set(row, { kind: 'delivered' });
    } catch (error) {
      out.set(row, failureOf(error));
    }
  }
  for (const r of refusals) {
    // Like a child's end: the event into the parent's inbox, the wake-up through the outbox.
    pass.writes.inboxAppend.push({ runId: r.runId, event: r.event });
    pass.writes.outbox.push({
      runId: r.runId,
      namespace: r.namespace,
      taskId: null,
      destination: RUNS_DESTINATION,
      messageId: `wake:${r.runId}:${r.childRunId}`,
      payload: { kind: 'wake_run', runId: r.runId, reason: 'child refused its input' },
    });
  }
  if (toInsert.length === 0) return;
  // A start whose key exists already (a redelivered or replayed start) inserts and decides nothing.
  const fresh = await tx.insertChildRuns(toInsert);
  for (const run of fresh) ctx.runs.remember(run.id, run.definitionId);
  await ctx.evaluator.decideRuns(
    tx,
    fresh.map((run) => ({ run, claimed: false, fresh: true, own: [{ kind: 'run_started' }] })),
    pass,
  );
}

function parentKey(p: { runId: string; nodeId: string; iteration: string; attempt: number }): string {
  return `${p.runId}\u0000${p.nodeId}\u0000${p.iteration}\u0000${p.attempt}`;
}

/**
 * The idempotency key of a run started by a node: the starting attempt's identity. The attempt is part of it
 * (invariant 10): without it a retried node's start would be absorbed as a duplicate of the previous
 * attempt's child, which has already finished, and the retry would wait forever (test: "a retried
 * sub-workflow node starts a new child").
 */
export function childStartKey(p: {
  runId: string;
  nodeId: string;
  iteration: string;
  attempt: number;
}): string {
  return `${p.runId}/${p.nodeId}/${p.iteration}/${p.attempt}`;
}

function refusedChild(p: StartRun, message: string): RunEvent {
  return {
    kind: 'child_finished',
    nodeId: p.parent.nodeId,
    iteration: p.parent.iteration,
    attempt: p.parent.attempt,
    childRunId: p.runId,
    status: 'failed',
    output: null as Json | null,
    error: { message, reason: 'input' },
  };
}
