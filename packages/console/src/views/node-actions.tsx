import { useState } from 'react';
import { api } from '../api/endpoints.js';
import type { Json, Run } from '../api/types.js';
import { ConfirmAction } from '../components/confirm-action.js';
import type { NodeInstance } from '../lib/run-state.js';

const FINISHED = ['completed', 'failed', 'cancelled', 'terminated'];

/** Parses the JSON typed for a node's output; throws a message that says what to fix. */
function parseOutput(text: string): Json {
  try {
    return JSON.parse(text === '' ? 'null' : text) as Json;
  } catch (e) {
    throw new Error(`the output is not valid JSON: ${(e as Error).message}`);
  }
}

/** Operator actions on one node instance: rerun from it (a finished run), or skip, complete or fail it. */
export function NodeActions(props: {
  run: Run;
  nodeId: string;
  iteration: string;
  instance: NodeInstance | undefined;
  onDone: () => void;
}) {
  const { run, nodeId, iteration } = props;
  const [output, setOutput] = useState('null');
  const [message, setMessage] = useState('');
  const finished = FINISHED.includes(run.status);
  const at = iteration ? { iteration } : {};
  const done = () => props.onDone();
  const byNode = (action: string, extra: Record<string, unknown>) => async (reason: string) => {
    await api.nodeAction(run.id, nodeId, action, {
      by: 'console',
      ...at,
      ...(reason ? { reason } : {}),
      ...extra,
    });
    done();
  };
  const open = props.instance && !['completed', 'skipped'].includes(props.instance.latest.status);
  return (
    <fieldset className="node-actions">
      <legend className="visually-hidden">{`Actions on node ${nodeId}`}</legend>
      <ConfirmAction
        hidden={!finished}
        label="Rerun from here"
        title={`Rerun from ${nodeId}`}
        explain={`The run opens again: ${nodeId} and every node after it run again as new attempts; nodes before it keep their outputs.`}
        act={async (reason) => {
          await api.runAction(run.id, 'rerun', {
            by: 'console',
            node: nodeId,
            ...at,
            ...(reason ? { reason } : {}),
          });
          done();
        }}
      />
      <ConfirmAction
        hidden={finished || !open}
        label="Skip"
        title={`Skip ${nodeId}`}
        explain="The node is marked skipped and the run goes on as if it had completed with no output."
        act={byNode('skip', {})}
      />
      <ConfirmAction
        hidden={finished || !open}
        label="Complete"
        title={`Complete ${nodeId} by hand`}
        explain="The node completes with the output you give; what runs after it reads that output."
        act={(reason) => byNode('complete', { output: parseOutput(output) })(reason)}
      >
        <label>
          Output (JSON)
          <textarea className="mono" rows={3} value={output} onChange={(e) => setOutput(e.target.value)} />
        </label>
      </ConfirmAction>
      <ConfirmAction
        hidden={finished || !open}
        label="Fail"
        title={`Fail ${nodeId} by hand`}
        danger
        explain="The node's current attempt fails with your message; its retry policy decides what follows."
        act={(reason) => byNode('fail', { error: { message: message || 'failed by an operator' } })(reason)}
      >
        <label>
          Error message
          <input value={message} onChange={(e) => setMessage(e.target.value)} />
        </label>
      </ConfirmAction>
    </fieldset>
  );
}
