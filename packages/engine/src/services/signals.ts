import { isTerminalRun, type Json, type RunEvent, SIGNAL_NAME_PATTERN, WeftError } from '@weft/core';
import type { Evaluator } from '../decisions/evaluator.js';
import type { PassRunner } from '../decisions/pass-runner.js';
import { BlobUses } from '../payloads/blob-uses.js';
import type { PayloadStore } from '../payloads/payload-store.js';
import { uuidv7 } from '../support/ids.js';
import type { DefinitionService } from './definitions.js';

/** What sending signals uses. */
export interface SignalDeps {
  readonly passes: PassRunner;
  readonly evaluator: Evaluator;
  readonly definitions: Pick<DefinitionService, 'workflow'>;
  readonly payloads: PayloadStore;
}

/** A signal to send to a run. */
export interface SignalRequest {
  readonly namespace: string;
  readonly runId: string;
  readonly name: string;
  readonly data: Json;
  /** Only a wait_for_event node whose correlation gives this key takes the signal. */
  readonly correlation?: string | null;
  /** Who sent it, for the run's history. */
  readonly by: string;
}

/**
 * What became of a signal: `delivered` to a waiting node, `kept` until a node waits for it, or `queued`
 * in the inbox of a paused run (decided when the run resumes).
 */
export interface SignalOutcome {
  readonly signalId: string;
  readonly outcome: 'delivered' | 'kept' | 'queued';
  readonly node?: string;
  readonly iteration?: string;
}

/**
 * Signal data is a payload like any other: over the engine's threshold it goes to the blob store (the
 * event, the mailbox and the node's output carry a reference, resolved for readers), over the hard limit
 * (`maxPayloadBytes`) it is refused. This is only the default of that limit, for callers that size a body.
 */
export const MAX_SIGNAL_BYTES = 16 * 1024 * 1024;
const MAX_CORRELATION = 200;

/**
 * Sends signals to runs. A signal is decided like an operator action: under the run's row lock, with the
 * run's pending decision claimed first (invariants 1 and 2), so it is ordered against every other event of
 * the run (a timeout firing at the same instant, the wait node being reached) and numbered in its history.
 */
export class SignalService {
  constructor(private readonly ctx: SignalDeps) {}

  /**
   * Sends a signal. Refused, changing nothing: a run that does not exist or has finished, a signal name
   * no node of the run's definition waits for, and a signal that would overflow the run's kept signals.
   */
  async send(request: SignalRequest): Promise<SignalOutcome> {
    check(request);
    const data = await this.ctx.payloads.offload(request.data ?? null, 'the signal data');
    const signalId = uuidv7();
    const event: RunEvent = {
      kind: 'signal_received',
      signalId,
      name: request.name,
      correlation: request.correlation ?? null,
      data,
      by: request.by,
    };
    const { result, pass } = await this.ctx.passes.run(
      null,
      async (tx, pass) => {
        const [run] = await tx.lockRuns([request.runId], 'wait');
        if (!run || run.namespace !== request.namespace)
          throw new WeftError('run_not_found', `there is no run ${request.runId}`, 404);
        if (isTerminalRun(run.status)) {
          throw new WeftError(
            'run_finished',
            `run ${run.id} is already ${run.status}; signals go to running or paused runs only, and nothing was recorded`,
            409,
          );
        }
        const workflow = await this.ctx.definitions.workflow(run.definitionId, tx);
        if (!workflow.signals.has(request.name)) {
          const known = [...workflow.signals];
          throw new WeftError(
            'unknown_signal',
            `${run.definitionName} v${run.definitionVersion} waits for no signal named "${request.name}"${known.length > 0 ? ` (it waits for ${known.map((s) => `"${s}"`).join(', ')})` : ' (it has no wait_for_event node)'}`,
            422,
          );
        }
        const claimed = await tx.claimDecisions([run.id]);
        await this.ctx.evaluator.decideRuns(tx, [{ run, claimed: claimed.length > 0, own: [event] }], pass);
        const record = pass.writes.history.find(
          (h) => h.type === 'signal.received' && (h.data as { signal_id?: string }).signal_id === signalId,
        );
        const data = (record?.data ?? null) as {
          outcome?: string;
          why?: string;
          node?: string;
          iteration?: string;
        } | null;
        if (data?.outcome === 'refused')
          throw new WeftError(
            'signal_refused',
            `the signal was refused: ${data.why}; nothing was recorded`,
            409,
          );
        await pass.finish(tx);
        const outcome: SignalOutcome = !data
          ? { signalId, outcome: 'queued' }
          : data.outcome === 'delivered'
            ? { signalId, outcome: 'delivered', node: data.node ?? '', iteration: data.iteration ?? '' }
            : { signalId, outcome: 'kept' };
        return outcome;
      },
      { source: 'signal' },
      BlobUses.of(request.runId, data, request.data ?? null),
    );
    await this.ctx.passes.committed(pass);
    return result;
  }
}

function check(request: SignalRequest): void {
  if (!SIGNAL_NAME_PATTERN.test(request.name)) {
    throw new WeftError(
      'bad_request',
      `${JSON.stringify(request.name)} is not a valid signal name: use letters, digits, ".", "_", ":", "/" and "-"`,
      400,
    );
  }
  const c = request.correlation;
  if (c !== undefined && c !== null && (typeof c !== 'string' || c === '' || c.length > MAX_CORRELATION)) {
    throw new WeftError(
      'bad_request',
      `correlation must be non-empty text of at most ${MAX_CORRELATION} characters`,
      400,
    );
  }
}
