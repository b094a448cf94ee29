import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';
import { api } from '../api/endpoints.js';
import type { DeadLetter } from '../api/types.js';
import { ConfirmAction } from '../components/confirm-action.js';
import { Dialog } from '../components/dialog.js';
import { ErrorNote } from '../components/error-note.js';
import { JsonView } from '../components/json-view.js';
import { formatTime, shortId } from '../lib/format.js';
import { useNamespace } from '../lib/namespace-context.js';

/** Dead letters, newest first, a page at a time: inspect one, replay one, or replay them all. */
export function DeadLetters(props: { onReplayed: () => void }) {
  const ns = useNamespace();
  const [cursor, setCursor] = useState<string | undefined>(undefined);
  const dead = useQuery({
    queryKey: ['dead-letters', ns, cursor],
    queryFn: () => api.deadLetters(undefined, cursor),
  });
  const [shown, setShown] = useState<DeadLetter | null>(null);
  const replay = async (body: { ids?: string[] }) => {
    await api.replay(body);
    props.onReplayed();
  };
  return (
    <>
      <div className="page-head">
        <h2>Dead letters</h2>
        <ConfirmAction
          label="Replay all"
          title="Replay every dead letter"
          disabled={!dead.data || dead.data.items.length === 0}
          explain="Every dead letter of the namespace is put back for delivery, with its attempts reset."
          act={() => replay({})}
        />
      </div>
      <ErrorNote error={dead.error} what="Could not list dead letters" />
      <table className="grid">
        <caption className="visually-hidden">Dead letters, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Id</th>
            <th scope="col">Destination</th>
            <th scope="col">Run</th>
            <th scope="col">Attempts</th>
            <th scope="col" className="wide-only">
              Last error
            </th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {(dead.data?.items ?? []).map((d) => (
            <DeadLetterRow
              key={d.id}
              letter={d}
              onInspect={() => setShown(d)}
              onReplay={() => replay({ ids: [d.id] })}
            />
          ))}
        </tbody>
      </table>
      {dead.data?.items.length === 0 && <p className="empty">No dead letter.</p>}
      <nav className="pager" aria-label="Pages of dead letters">
        <button type="button" className="secondary" disabled={!cursor} onClick={() => setCursor(undefined)}>
          ← Newest
        </button>
        <button
          type="button"
          className="secondary"
          disabled={!dead.data?.next_cursor}
          onClick={() => setCursor(dead.data?.next_cursor ?? undefined)}
        >
          Older →
        </button>
      </nav>
      <DeadLetterDialog letter={shown} onClose={() => setShown(null)} />
    </>
  );
}

function DeadLetterRow(props: { letter: DeadLetter; onInspect: () => void; onReplay: () => Promise<void> }) {
  const d = props.letter;
  return (
    <tr>
      <td className="mono">{d.id}</td>
      <td className="mono">{d.destination}</td>
      <td>
        {d.run_id ? (
          <Link to={`/runs/${d.run_id}`} className="mono" title={d.run_id}>
            {shortId(d.run_id)}
          </Link>
        ) : (
          '—'
        )}
      </td>
      <td>{d.attempts}</td>
      <td className="wide-only">{d.last_error ?? '—'}</td>
      <td className="row-actions">
        <button
          type="button"
          className="secondary"
          onClick={props.onInspect}
          aria-label={`Inspect dead letter ${d.id}`}
        >
          Inspect
        </button>
        <ConfirmAction
          label={`Replay ${d.id}`}
          title={`Replay dead letter ${d.id}`}
          explain={`The message to ${d.destination} is put back for delivery, with its attempts reset.`}
          act={props.onReplay}
        />
      </td>
    </tr>
  );
}

function DeadLetterDialog(props: { letter: DeadLetter | null; onClose: () => void }) {
  const d = props.letter;
  return (
    <Dialog open={d !== null} title={`Dead letter ${d?.id ?? ''}`} onClose={props.onClose} wide>
      {d && (
        <>
          <dl className="facts">
            <dt>Destination</dt>
            <dd className="mono">{d.destination}</dd>
            <dt>Kind</dt>
            <dd>{d.kind}</dd>
            <dt>Message id</dt>
            <dd className="mono">{d.message_id}</dd>
            <dt>Dead since</dt>
            <dd>{formatTime(d.dead_at)}</dd>
            <dt>Last error</dt>
            <dd>{d.last_error ?? '—'}</dd>
          </dl>
          <h3>Payload</h3>
          <JsonView value={d.payload} label="Payload" />
        </>
      )}
    </Dialog>
  );
}
