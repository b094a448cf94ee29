import { useQuery, useQueryClient } from '@tanstack/react-query';
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

/**
 * What is leaving runs: the outbox backlog per destination (waiting, retrying, dead), and the dead
 * letters, each inspectable and replayable, one at a time or all at once.
 */
export function OutboxPage() {
  const ns = useNamespace();
  const queries = useQueryClient();
  const backlog = useQuery({ queryKey: ['outbox', ns], queryFn: api.outbox, refetchInterval: 5000 });
  const [cursor, setCursor] = useState<string | undefined>(undefined);
  const dead = useQuery({
    queryKey: ['dead-letters', ns, cursor],
    queryFn: () => api.deadLetters(undefined, cursor),
  });
  const [shown, setShown] = useState<DeadLetter | null>(null);
  const refresh = () => {
    void queries.invalidateQueries({ queryKey: ['dead-letters', ns] });
    void queries.invalidateQueries({ queryKey: ['outbox', ns] });
  };
  return (
    <section aria-labelledby="outbox-title">
      <h1 id="outbox-title">Outbox</h1>
      <ErrorNote error={backlog.error ?? dead.error} what="Could not read the outbox" />
      <table className="grid">
        <caption>Backlog per destination</caption>
        <thead>
          <tr>
            <th scope="col">Destination</th>
            <th scope="col">Waiting</th>
            <th scope="col">Retrying</th>
            <th scope="col">Dead</th>
            <th scope="col">Oldest</th>
            <th scope="col" className="wide-only">
              Last error
            </th>
          </tr>
        </thead>
        <tbody>
          {(backlog.data?.items ?? []).map((b) => (
            <tr key={b.destination}>
              <td className="mono">{b.destination}</td>
              <td>{b.pending}</td>
              <td>{b.retrying}</td>
              <td>{b.dead}</td>
              <td>{formatTime(b.oldest_at)}</td>
              <td className="wide-only">{b.last_error ?? '—'}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {backlog.data?.items.length === 0 && (
        <p className="empty">Nothing is waiting to leave: every message was delivered.</p>
      )}
      <div className="page-head">
        <h2>Dead letters</h2>
        <ConfirmAction
          label="Replay all"
          title="Replay every dead letter"
          disabled={!dead.data || dead.data.items.length === 0}
          explain="Every dead letter of the namespace is put back for delivery, with its attempts reset."
          act={async () => {
            await api.replay({});
            refresh();
          }}
        />
      </div>
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
            <tr key={d.id}>
              <td className="mono">{d.id}</td>
              <td className="mono">{d.destination}</td>
              <td>
                {d.run_id ? (
                  <Link to={`/runs/${d.run_id}`} className="mono">
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
                  onClick={() => setShown(d)}
                  aria-label={`Inspect dead letter ${d.id}`}
                >
                  Inspect
                </button>
                <ConfirmAction
                  label={`Replay ${d.id}`}
                  title={`Replay dead letter ${d.id}`}
                  explain={`The message to ${d.destination} is put back for delivery, with its attempts reset.`}
                  act={async () => {
                    await api.replay({ ids: [d.id] });
                    refresh();
                  }}
                />
              </td>
            </tr>
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
      <Dialog
        open={shown !== null}
        title={`Dead letter ${shown?.id ?? ''}`}
        onClose={() => setShown(null)}
        wide
      >
        {shown && (
          <>
            <dl className="facts">
              <dt>Destination</dt>
              <dd className="mono">{shown.destination}</dd>
              <dt>Kind</dt>
              <dd>{shown.kind}</dd>
              <dt>Message id</dt>
              <dd className="mono">{shown.message_id}</dd>
              <dt>Dead since</dt>
              <dd>{formatTime(shown.dead_at)}</dd>
              <dt>Last error</dt>
              <dd>{shown.last_error ?? '—'}</dd>
            </dl>
            <h3>Payload</h3>
            <JsonView value={shown.payload} label="Payload" />
          </>
        )}
      </Dialog>
    </section>
  );
}
