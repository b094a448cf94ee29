import { Link } from 'react-router';
import type { GraphNode, Run } from '../api/types.js';
import { JsonView } from '../components/json-view.js';
import { StatusBadge } from '../components/status-badge.js';
import { formatDuration, formatTime, shortId } from '../lib/format.js';
import type { NodeInstance } from '../lib/run-state.js';
import { NodeActions } from './node-actions.js';

/** A node instance's iteration as the docs write it after the node id: `[2]`, `[1/3]`; nothing at the top level. */
export function iterationLabel(iteration: string): string {
  return iteration === '' ? '' : `[${iteration}]`;
}

/**
 * One node instance of a run: every attempt (status, worker, times), and the latest attempt's input,
 * output and error as JSON (large payloads kept in the blob store come back resolved by the API), with
 * the operator actions on the node.
 */
export function NodePanel(props: {
  run: Run;
  node: GraphNode;
  iteration: string;
  instance: NodeInstance | undefined;
  onDone: () => void;
}) {
  const { node, instance, run } = props;
  const latest = instance?.latest;
  const title = `${node.id}${iterationLabel(props.iteration)}`;
  return (
    <section className="panel node-panel" aria-labelledby="node-title">
      <h2 id="node-title">
        Node <span className="mono">{title}</span> {latest && <StatusBadge status={latest.status} />}
      </h2>
      <p className="muted">
        {node.kind}
        {node.taskType ? `: ${String(node.taskType)}` : ''}
        {node.line ? ` · line ${node.line} of the definition` : ''}
      </p>
      {!instance && (
        <p>This node has not been reached in this run{props.iteration ? ' at this iteration' : ''}.</p>
      )}
      {instance && (
        <>
          <table className="grid compact">
            <caption>Attempts</caption>
            <thead>
              <tr>
                <th scope="col">#</th>
                <th scope="col">Status</th>
                <th scope="col">Worker</th>
                <th scope="col">Started</th>
                <th scope="col">Took</th>
              </tr>
            </thead>
            <tbody>
              {instance.attempts.map((a) => (
                <tr key={a.id}>
                  <td>{a.attempt}</td>
                  <td>
                    <StatusBadge status={a.status} />
                  </td>
                  <td className="mono">{a.worker ?? '—'}</td>
                  <td>{formatTime(a.started_at ?? a.created_at)}</td>
                  <td>{a.started_at ? formatDuration(a.started_at, a.finished_at) : '—'}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {latest?.child_run_id && (
            <p>
              Child run:{' '}
              <Link to={`/runs/${latest.child_run_id}`} className="mono">
                {shortId(latest.child_run_id)}
              </Link>
            </p>
          )}
          <h3>Input</h3>
          <JsonView value={latest?.input} label={`Input of ${title}`} />
          <h3>Output</h3>
          <JsonView value={latest?.output} label={`Output of ${title}`} />
          {latest?.error !== null && latest?.error !== undefined && (
            <>
              <h3>Error</h3>
              <JsonView value={latest.error} label={`Error of ${title}`} />
            </>
          )}
        </>
      )}
      <NodeActions
        run={run}
        nodeId={node.id}
        iteration={props.iteration}
        instance={instance}
        onDone={props.onDone}
      />
    </section>
  );
}
