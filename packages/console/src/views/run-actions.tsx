import { api } from '../api/endpoints.js';
import type { Run } from '../api/types.js';
import { ConfirmAction } from '../components/confirm-action.js';

const FINISHED = ['completed', 'failed', 'cancelled', 'terminated'];

/** The run's own operator actions, each offered only in the states that allow it. */
export function RunActions(props: { run: Run; onDone: () => void }) {
  const { run } = props;
  const live = !FINISHED.includes(run.status);
  const act =
    (action: string, extra: Record<string, unknown> = {}) =>
    async (reason: string) => {
      await api.runAction(run.id, action, { by: 'console', ...(reason ? { reason } : {}), ...extra });
      props.onDone();
    };
  return (
    <fieldset className="run-actions">
      <legend className="visually-hidden">Run actions</legend>
      <ConfirmAction
        hidden={run.status !== 'running'}
        label="Pause"
        title="Pause this run"
        explain="Nothing new starts while the run is paused; running attempts finish. Signals wait in its inbox."
        act={act('pause')}
      />
      <ConfirmAction
        hidden={run.status !== 'paused'}
        label="Resume"
        title="Resume this run"
        explain="The run goes on where it stopped."
        act={act('resume')}
      />
      <ConfirmAction
        hidden={!live}
        label="Cancel"
        title="Cancel this run"
        danger
        explain="Open work is cancelled, child runs too, and compensations run if the workflow has them."
        act={act('cancel')}
      />
      <ConfirmAction
        hidden={!live}
        label="Terminate"
        title="Terminate this run"
        danger
        reasonRequired
        explain="The run ends at once: no compensation runs, child runs are terminated."
        act={act('terminate')}
      />
      <ConfirmAction
        hidden={!['failed', 'cancelled', 'terminated'].includes(run.status)}
        label="Retry"
        title="Retry this run"
        explain="Every node that did not complete runs again, as a new attempt; completed nodes keep their output."
        act={act('retry')}
      />
    </fieldset>
  );
}
