import { useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '../api/endpoints.js';
import type { OutboxBacklog } from '../api/types.js';
import { ErrorNote } from '../components/error-note.js';
import { formatTime } from '../lib/format.js';
import { useNamespace } from '../lib/namespace-context.js';
import { DeadLetters } from './dead-letters.js';

/**
 * What is leaving runs: the outbox backlog per destination (waiting, retrying, dead), and the dead
 * letters, each inspectable and replayable, one at a time or all at once.
 */
export function OutboxPage() {
  const ns = useNamespace();
  const queries = useQueryClient();
  const backlog = useQuery({ queryKey: ['outbox', ns], queryFn: api.outbox, refetchInterval: 5000 });
  const refresh = () => {
    void queries.invalidateQueries({ queryKey: ['dead-letters', ns] });
    void queries.invalidateQueries({ queryKey: ['outbox', ns] });
  };
  return (
    <section aria-labelledby="outbox-title">
      <h1 id="outbox-title">Outbox</h1>
      <ErrorNote error={backlog.error} what="Could not read the outbox" />
      <BacklogTable items={backlog.data?.items} />
      <DeadLetters onReplayed={refresh} />
    </section>
  );
}

function BacklogTable(props: { items: OutboxBacklog[] | undefined }) {
  return (
    <>
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
          {(props.items ?? []).map((b) => (
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
      {props.items?.length === 0 && (
        <p className="empty">Nothing is waiting to leave: every message was delivered.</p>
      )}
    </>
  );
}
