import { useQuery } from '@tanstack/react-query';
import { api } from '../api/endpoints.js';
import { ErrorNote } from '../components/error-note.js';
import { formatMs, formatTime } from '../lib/format.js';
import { useNamespace } from '../lib/namespace-context.js';

/** Workers that asked for tasks recently, and the task types each asks for. */
export function WorkersPage() {
  const ns = useNamespace();
  const list = useQuery({ queryKey: ['workers', ns], queryFn: api.workers, refetchInterval: 5000 });
  return (
    <section aria-labelledby="workers-title">
      <h1 id="workers-title">Workers</h1>
      {list.data && <p className="muted">Workers seen in the last {formatMs(list.data.seen_within_ms)}.</p>}
      <ErrorNote error={list.error} what="Could not list workers" />
      <table className="grid">
        <caption className="visually-hidden">Workers seen recently</caption>
        <thead>
          <tr>
            <th scope="col">Worker</th>
            <th scope="col">Task types</th>
            <th scope="col">Last seen</th>
            <th scope="col" className="wide-only">
              First seen
            </th>
          </tr>
        </thead>
        <tbody>
          {(list.data?.items ?? []).map((w) => (
            <tr key={w.name}>
              <td className="mono">{w.name}</td>
              <td>{w.task_types.join(', ')}</td>
              <td>{formatTime(w.last_seen_at)}</td>
              <td className="wide-only">{formatTime(w.first_seen_at)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {list.data?.items.length === 0 && <p className="empty">No worker has asked for tasks recently.</p>}
    </section>
  );
}
