import type { RunView } from '@weft/core';
import type { LockedRun } from '../store/records.js';

/** The run as the decider sees it. */
export function runView(run: LockedRun): RunView {
  return {
    id: run.id,
    definition: run.definitionName,
    version: run.definitionVersion,
    status: run.status,
    input: run.input,
    vars: run.vars,
    sinksDone: run.sinksDone,
  };
}
