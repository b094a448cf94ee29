import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';
import { api } from '../api/endpoints.js';
import { ErrorNote } from '../components/error-note.js';
import { formatTime, shortId } from '../lib/format.js';
import { useNamespace } from '../lib/namespace-context.js';

const STATES = ['open', 'completed', 'expired', 'cancelled'] as const;

/** Human tasks of the namespace, oldest first: open ones by default, read again every five seconds. */
export function InboxPage() {
  const ns = useNamespace();
  const [state, setState] = useState<string>('open');
  const [assignee, setAssignee] = useState('');
  const list = useQuery({
    queryKey: ['inbox', ns, state, assignee],
    queryFn: () => api.inbox(state, assignee || undefined),
    refetchInterval: 5000,
  });
  return (
    <section aria-labelledby="inbox-title">
      <h1 id="inbox-title">Inbox</h1>
      <div className="filters">
        <label>
          State
          <select value={state} onChange={(e) => setState(e.target.value)}>
            {STATES.map((s) => (
              <option key={s}>{s}</option>
            ))}
          </select>
        </label>
        <label>
          For
          <input value={assignee} placeholder="anyone" onChange={(e) => setAssignee(e.target.value.trim())} />
        </label>
      </div>
      <ErrorNote error={list.error} what="Could not read the inbox" />
      <table className="grid">
        <caption className="visually-hidden">Human tasks</caption>
        <thead>
          <tr>
            <th scope="col">Task</th>
            <th scope="col">Run</th>
            <th scope="col">For</th>
            <th scope="col">Claimed by</th>
            <th scope="col">Due</th>
          </tr>
        </thead>
        <tbody>
          {(list.data?.items ?? []).map((t) => (
            <tr key={t.task_id}>
              <td>
                <Link to={`/inbox/${t.task_id}`}>{t.title}</Link>
              </td>
              <td>
                <Link to={`/runs/${t.run_id}`} className="mono">
                  {shortId(t.run_id)}
                </Link>{' '}
                <span className="muted">{t.definition}</span>
              </td>
              <td>{t.assignees.join(', ') || '—'}</td>
              <td>{t.claimed_by ?? '—'}</td>
              <td>{formatTime(t.deadline_at)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {list.data?.items.length === 0 && <p className="empty">No {state} human task.</p>}
    </section>
  );
}
