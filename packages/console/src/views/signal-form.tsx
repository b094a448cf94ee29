import { type FormEvent, useState } from 'react';
import { api } from '../api/endpoints.js';
import type { GraphNode, Json } from '../api/types.js';
import { ErrorNote } from '../components/error-note.js';

/** The signal names a definition's wait_for_event nodes wait for, bodies included. */
export function signalNames(nodes: readonly GraphNode[]): string[] {
  const out = new Set<string>();
  const walk = (list: readonly GraphNode[]) => {
    for (const n of list) {
      if (n.kind === 'wait_for_event' && typeof n.event === 'string') out.add(n.event);
      if (n.body) walk(n.body.nodes);
    }
  };
  walk(nodes);
  return [...out].sort();
}

/**
 * Sends a signal to the run: a name its definition waits for, JSON data and an optional correlation key.
 * It stays on the page once the run has finished (sending then disabled), so the last answer stays shown.
 */
export function SignalForm(props: { runId: string; names: string[]; finished: boolean; onSent: () => void }) {
  const [name, setName] = useState(props.names[0] ?? '');
  const [data, setData] = useState('{}');
  const [correlation, setCorrelation] = useState('');
  const [result, setResult] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const send = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    setResult(null);
    let parsed: Json;
    try {
      parsed = JSON.parse(data || 'null') as Json;
    } catch (e) {
      setError(new Error(`the data is not valid JSON: ${(e as Error).message}`));
      return;
    }
    try {
      const answer = await api.signal(props.runId, {
        name,
        data: parsed,
        ...(correlation ? { correlation } : {}),
      });
      setResult(`${answer.outcome}${answer.node_id ? ` to ${answer.node_id}` : ''}`);
      props.onSent();
    } catch (e) {
      setError(e);
    }
  };
  if (props.names.length === 0) return null;
  return (
    <form className="panel signal-form" onSubmit={send} aria-labelledby="signal-title">
      <h2 id="signal-title">Send a signal</h2>
      <label>
        Signal
        <select value={name} onChange={(e) => setName(e.target.value)}>
          {props.names.map((n) => (
            <option key={n}>{n}</option>
          ))}
        </select>
      </label>
      <label>
        Data (JSON)
        <textarea className="mono" rows={3} value={data} onChange={(e) => setData(e.target.value)} />
      </label>
      <label>
        Correlation key (optional)
        <input value={correlation} onChange={(e) => setCorrelation(e.target.value)} />
      </label>
      <button type="submit" disabled={props.finished}>
        Send signal
      </button>
      {props.finished && <p className="muted">The run has finished: it takes no more signals.</p>}
      {result && <p role="status">Signal {result}.</p>}
      <ErrorNote error={error} />
    </form>
  );
}
