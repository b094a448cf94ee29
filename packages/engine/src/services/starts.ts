import type { Span } from '@opentelemetry/api';
import { type Json, WeftError, type Workflow } from '@weft/core';
import type { Evaluator } from '../decisions/evaluator.js';
import type { Pass } from '../decisions/pass.js';
import type { PassRunner } from '../decisions/pass-runner.js';
import type { Extensions } from '../extensions/extensions.js';
import { BlobUses } from '../payloads/blob-uses.js';
import type { PayloadStore } from '../payloads/payload-store.js';
import type { DefinitionRecord, LockedRun, RunRecord, StartRequest } from '../store/records.js';
import type { IdempotentRun, NewRun, Store, StoreTx } from '../store/store.js';
import { uuidv7 } from '../support/ids.js';
import type { EngineStats } from '../support/stats.js';
import { openStartSpan } from '../tracing/decision-spans.js';
import { formatTraceparent } from '../tracing/traceparent.js';
import type { DefinitionService } from './definitions.js';
import type { RunIndex } from './run-index.js';
import { attributesOf, checkInput } from './start-checks.js';
import { checkHints, hintedNames, StaleLatestVersions } from './start-hints.js';

export { checkInput } from './start-checks.js';

/** What starting runs uses. */
export interface StartDeps {
  readonly store: Store;
  readonly passes: PassRunner;
  readonly evaluator: Evaluator;
  readonly definitions: Pick<DefinitionService, 'resolve' | 'resolveForStart' | 'forgetLatest'>;
  /** The before-start hook. */
  readonly extensions: Pick<Extensions, 'checkStart'>;
  readonly payloads: PayloadStore;
  readonly runs: RunIndex;
  readonly stats: EngineStats;
}

/** A started (or, for a repeated idempotency key, an existing) run. */
export interface StartOutcome {
  readonly run: RunRecord;
  readonly created: boolean;
}

/** One start's result inside a batch: a run, or the error that start alone gets. */
export type StartResult = { ok: true; outcome: StartOutcome } | { ok: false; error: unknown };

const keyOf = (namespace: string, key: string) => `${namespace}\u0000${key}`;

/**
 * Starts a batch of runs in one transaction (each start still gets its own answer, and a bad one fails
 * alone). In order on the transaction's connection: the batch's idempotency keys are claimed (sorted, so
 * batches never deadlock), the quota locks of namespaces that have a quota are taken, and the runs are
 * inserted by a statement that, starting after both, counts running runs and skips runs whose key was lost
 * (invariant 18: the count and the insert happen under the namespace's advisory lock).
 *
 * A start that lost its key is answered after this transaction ends, by looking the key up then: inside the
 * transaction the winner may not have committed, and an uncommitted run is invisible (invariant 11; test:
 * "ten simultaneous starts with one key make one run, and all ten answers name it").
 *
 * A start of a definition's latest version takes that version from what the engine last read, and the
 * transaction checks it is still the latest; when another process deployed since, nothing is written and
 * the batch starts again with the versions read from the store (test: "a start after another server's
 * deploy runs the new version"). A start so saves the read of its definition.
 */
export async function startBatch(ctx: StartDeps, requests: readonly StartRequest[]): Promise<StartResult[]> {
  for (let hints = true; ; hints = false) {
    const results: (StartResult | null)[] = requests.map(() => null);
    const { accepted, waiting } = await checkStarts(ctx, requests, results, hints);
    if (accepted.length > 0) {
      const inserted = await insertStarts(ctx, accepted);
      if (inserted.stale.length > 0) {
        ctx.definitions.forgetLatest(inserted.stale);
        continue;
      }
      answerInserted(accepted, inserted, waiting, results);
    }
    if (waiting.length > 0) await answerDuplicates(ctx, requests, waiting, results);
    return results.map((r) => r!);
  }
}

/** A start checked and ready to insert, at its place in the batch. */
interface AcceptedStart {
  readonly index: number;
  readonly run: NewRun;
  readonly by?: string;
  /** The caller's `traceparent`. */
  readonly traceContext?: string;
  /** The input as given, when `run.input` is a reference to it in the blob store. */
  readonly offloaded?: Json;
  /** True when `run` names the latest version as the engine last read it, unchecked. */
  readonly hinted?: boolean;
}

/** A start answered by the run another start with the same key made. */
interface WaitingStart {
  readonly index: number;
  readonly namespace: string;
  readonly key: string;
}

/** What the batch's transaction did: the runs it inserted, the keys it won, the quotas that refused. */
interface Inserted {
  /** Definitions whose hinted latest version is no longer the latest: nothing was written. */
  readonly stale: readonly { namespace: string; name: string }[];
  readonly locked: readonly LockedRun[];
  readonly wonKeys: ReadonlySet<string>;
  readonly usage: readonly { namespace: string; max: number; used: number }[];
}

/**
 * Checks each start before anything is written (its definition, the before-start hook, its input), and
 * sorts the good ones into runs to insert and starts that wait for the first start with their key. A bad
 * start gets its error in `results`.
 */
async function checkStarts(
  ctx: StartDeps,
  requests: readonly StartRequest[],
  results: (StartResult | null)[],
  hints: boolean,
): Promise<{ accepted: AcceptedStart[]; waiting: WaitingStart[] }> {
  const accepted: AcceptedStart[] = [];
  const waiting: WaitingStart[] = [];
  const leaders = new Map<string, number>();
  type Found = { record: DefinitionRecord; workflow: Workflow; hinted?: boolean };
  const resolved = new Map<string, Promise<Found>>();
  for (const [index, request] of requests.entries()) {
    const defKey = `${request.namespace}\u0000${request.definition}\u0000${request.version ?? ''}`;
    let lookup = resolved.get(defKey);
    if (!lookup) {
      const { namespace, definition, version } = request;
      lookup = hints
        ? ctx.definitions.resolveForStart(namespace, definition, version)
        : ctx.definitions.resolve(namespace, definition, version);
      resolved.set(defKey, lookup);
    }
    try {
      const { record, workflow, hinted } = await lookup;
      // A guard or quota of the embedding application: a refusal writes nothing (test: "a before-start
      // guard refuses a run and writes nothing").
      await ctx.extensions.checkStart(request, record);
      checkInput(workflow, record, request);
      if (request.idempotencyKey !== undefined) {
        const k = keyOf(request.namespace, request.idempotencyKey);
        if (leaders.has(k)) {
          waiting.push({ index, namespace: request.namespace, key: request.idempotencyKey });
          continue;
        }
        leaders.set(k, index);
      }
      const input = await ctx.payloads.offload(request.input, 'the run input');
      accepted.push({
        index,
        ...(input !== request.input ? { offloaded: request.input } : {}),
        ...(request.by ? { by: request.by } : {}),
        ...(request.traceContext ? { traceContext: request.traceContext } : {}),
        ...(hinted ? { hinted } : {}),
        run: {
          id: uuidv7(),
          namespace: request.namespace,
          definitionId: record.id,
          definitionName: record.name,
          definitionVersion: record.version,
          input,
          ...(request.idempotencyKey !== undefined ? { idempotencyKey: request.idempotencyKey } : {}),
          ...(request.attributes !== undefined ? { attributes: attributesOf(request.attributes) } : {}),
        },
      });
    } catch (error) {
      results[index] = { ok: false, error };
    }
  }
  return { accepted, waiting };
}

/**
 * Opens the span of a batch's transaction, under the first start's `traceparent`, and gives each run the
 * trace context to keep: that span's for the starts of its caller, and their own caller's for starts of
 * other requests the batch took in (which the span links to), so no run lands in another request's trace.
 */
function traceStarts(accepted: readonly AcceptedStart[]): { span: Span; runs: NewRun[] } {
  const first = accepted.find((a) => a.traceContext)?.traceContext;
  const others = [
    ...new Set(accepted.flatMap((a) => (a.traceContext && a.traceContext !== first ? [a.traceContext] : []))),
  ];
  const span = openStartSpan(first, others);
  const own = formatTraceparent(span.spanContext());
  const runs = accepted.map((a) => {
    const traceContext = a.traceContext === first ? own : (a.traceContext ?? null);
    return traceContext ? { ...a.run, traceContext } : a.run;
  });
  return { span, runs };
}

/**
 * Inserts the batch's runs and decides their first step, in one transaction (see startBatch). When a hinted
 * latest version turned out stale, nothing is written and `stale` names the definitions.
 */
async function insertStarts(ctx: StartDeps, accepted: readonly AcceptedStart[]): Promise<Inserted> {
  const keyed: IdempotentRun[] = accepted.flatMap((a) =>
    a.run.idempotencyKey === undefined
      ? []
      : [
          {
            namespace: a.run.namespace,
            key: a.run.idempotencyKey,
            runId: a.run.id,
            definitionName: a.run.definitionName,
          },
        ],
  );
  const namespaces = [...new Set(accepted.map((a) => a.run.namespace))];
  const hinted = hintedNames(accepted);
  const { span, runs } = traceStarts(accepted);
  const blobs = new BlobUses();
  for (const a of accepted) blobs.note(a.run.id, a.run.input, a.offloaded);
  let ran: { result: Omit<Inserted, 'stale'>; pass: Pass };
  try {
    ran = await ctx.passes.run(
      null,
      async (tx, pass) => {
        // Sent in this order, awaited together: one round trip.
        const claiming = keyed.length > 0 ? tx.claimIdempotencyKeys(keyed) : Promise.resolve([]);
        const locking = tx.lockQuotas(namespaces);
        const inserting = tx.insertRuns(runs);
        const checking = hinted.length > 0 ? tx.latestDefinitionVersions(hinted) : Promise.resolve([]);
        const [won, , locked, latest] = await Promise.all([claiming, locking, inserting, checking]);
        checkHints(accepted, latest);
        const wonKeys = new Set(won.map((k) => keyOf(k.namespace, k.key)));
        const usage = await settleRefused(tx, accepted, keyed, wonKeys, locked);
        for (const run of locked) ctx.runs.remember(run.id, run.definitionId);
        const startedBy = new Map(accepted.flatMap((a) => (a.by ? [[a.run.id, a.by] as const] : [])));
        await ctx.evaluator.decideRuns(
          tx,
          locked.map((run) => {
            const by = startedBy.get(run.id);
            return {
              run,
              claimed: false,
              fresh: true,
              own: [{ kind: 'run_started', ...(by ? { by } : {}) }],
            };
          }),
          pass,
        );
        await pass.finish(tx);
        return { locked, wonKeys, usage };
      },
      { source: 'start', span },
      blobs,
    );
  } catch (e) {
    if (e instanceof StaleLatestVersions)
      return { stale: e.names, locked: [], wonKeys: new Set(), usage: [] };
    throw e;
  }
  await ctx.passes.committed(ran.pass);
  ctx.stats.runsStarted += ran.result.locked.length;
  return { ...ran.result, stale: [] };
}

/**
 * For the starts the insert left out: releases keys won by a run the quota kept out (a key must not name
 * a run that does not exist), and reads the quotas that refused them, for their answers.
 */
async function settleRefused(
  tx: StoreTx,
  accepted: readonly AcceptedStart[],
  keyed: readonly IdempotentRun[],
  wonKeys: ReadonlySet<string>,
  locked: readonly LockedRun[],
): Promise<Inserted['usage']> {
  const inserted = new Set(locked.map((r) => r.id));
  const orphans = keyed.filter((k) => wonKeys.has(keyOf(k.namespace, k.key)) && !inserted.has(k.runId));
  const refusedNamespaces = [
    ...new Set(
      accepted
        .filter((a) => !inserted.has(a.run.id))
        .filter(
          (a) =>
            a.run.idempotencyKey === undefined || wonKeys.has(keyOf(a.run.namespace, a.run.idempotencyKey)),
        )
        .map((a) => a.run.namespace),
    ),
  ];
  const [usage] = await Promise.all([
    refusedNamespaces.length > 0 ? tx.quotaUsage(refusedNamespaces) : Promise.resolve([]),
    orphans.length > 0 ? tx.releaseIdempotencyKeys(orphans) : Promise.resolve(),
  ]);
  return usage;
}

/**
 * Each inserted start's answer: its run; or, for a run left out, a wait for the start that won its key,
 * or the quota's refusal.
 */
function answerInserted(
  accepted: readonly AcceptedStart[],
  inserted: Inserted,
  waiting: WaitingStart[],
  results: (StartResult | null)[],
): void {
  const byId = new Map(inserted.locked.map((r) => [r.id, r]));
  const quota = new Map(inserted.usage.map((u) => [u.namespace, u]));
  for (const a of accepted) {
    const row = byId.get(a.run.id);
    if (row) {
      const { lastSeq: _s, now: _n, ...plain } = row;
      results[a.index] = { ok: true, outcome: { run: plain, created: true } };
    } else if (
      a.run.idempotencyKey !== undefined &&
      !inserted.wonKeys.has(keyOf(a.run.namespace, a.run.idempotencyKey))
    ) {
      waiting.push({ index: a.index, namespace: a.run.namespace, key: a.run.idempotencyKey });
    } else {
      const u = quota.get(a.run.namespace);
      results[a.index] = {
        ok: false,
        error: new WeftError(
          'quota_exceeded',
          `namespace "${a.run.namespace}" allows at most ${u?.max ?? 0} running runs and ${u?.used ?? 0} are running; wait for some to finish, or raise the quota (weft limits set quota N)`,
          429,
          { max: u?.max ?? 0, running: u?.used ?? 0 },
        ),
      };
    }
  }
}

/**
 * Answers starts whose key another start won, after this batch's transaction has ended. The winner has
 * committed by then (the claim waited for it), but its commit may still be on its way to this
 * connection's snapshot, hence a short, bounded retry.
 */
async function answerDuplicates(
  ctx: StartDeps,
  requests: readonly StartRequest[],
  waiting: readonly WaitingStart[],
  results: (StartResult | null)[],
): Promise<void> {
  let found = new Map<string, IdempotentRun>();
  for (let attempt = 0; attempt < 20; attempt++) {
    const rows = await ctx.store.getIdempotentRuns(
      waiting.map((w) => ({ namespace: w.namespace, key: w.key })),
    );
    found = new Map(rows.map((r) => [keyOf(r.namespace, r.key), r]));
    if (waiting.every((w) => found.has(keyOf(w.namespace, w.key)))) break;
    await new Promise((r) => setTimeout(r, 10 * (attempt + 1)));
  }
  for (const w of waiting) {
    const request = requests[w.index]!;
    const row = found.get(keyOf(w.namespace, w.key));
    try {
      if (!row) {
        throw new WeftError(
          'start_conflict',
          `another start with idempotency key ${JSON.stringify(w.key)} is still in progress; try again`,
          409,
        );
      }
      if (row.definitionName !== request.definition) {
        throw new WeftError(
          'idempotency_key_reused',
          `idempotency key ${JSON.stringify(w.key)} already started run ${row.runId} of definition "${row.definitionName}", not "${request.definition}"`,
          409,
          { run_id: row.runId },
        );
      }
      if (request.onDuplicate === 'error') {
        throw new WeftError(
          'duplicate_start',
          `idempotency key ${JSON.stringify(w.key)} already started run ${row.runId}`,
          409,
          { run_id: row.runId },
        );
      }
      const run = await ctx.store.getRun(row.runId);
      if (!run) throw new WeftError('run_not_found', `there is no run ${row.runId}`, 404);
      results[w.index] = { ok: true, outcome: { run, created: false } };
    } catch (error) {
      results[w.index] = { ok: false, error };
    }
  }
}
