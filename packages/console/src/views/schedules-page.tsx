import { useQuery, useQueryClient } from '@tanstack/react-query';
import { Link } from 'react-router';
import { api } from '../api/endpoints.js';
import type { Schedule } from '../api/types.js';
import { ConfirmAction } from '../components/confirm-action.js';
import { ErrorNote } from '../components/error-note.js';
import { formatTime, shortId } from '../lib/format.js';
import { useNamespace } from '../lib/namespace-context.js';

/** Schedules of the namespace with their next fire times; pause and resume. */
export function SchedulesPage() {
  const ns = useNamespace();
  const queries = useQueryClient();
  const list = useQuery({ queryKey: ['schedules', ns], queryFn: api.schedules, refetchInterval: 10_000 });
  return (
    <section aria-labelledby="schedules-title">
      <h1 id="schedules-title">Schedules</h1>
      <ErrorNote error={list.error} what="Could not list schedules" />
      <table className="grid">
        <caption className="visually-hidden">Schedules</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Definition</th>
            <th scope="col">Cron</th>
            <th scope="col">Next fire times</th>
            <th scope="col" className="wide-only">
              Last run
            </th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {(list.data?.items ?? []).map((s) => (
            <ScheduleRow
              key={s.name}
              schedule={s}
              onChanged={() => void queries.invalidateQueries({ queryKey: ['schedules', ns] })}
            />
          ))}
        </tbody>
      </table>
      {list.data?.items.length === 0 && <p className="empty">No schedule in this namespace.</p>}
    </section>
  );
}

function ScheduleRow(props: { schedule: Schedule; onChanged: () => void }) {
  const s = props.schedule;
  return (
    <tr>
      <td>
        {s.name} {s.paused && <span className="badge status-paused">paused</span>}
      </td>
      <td>
        {s.definition}
        {s.version ? ` v${s.version}` : ''}
      </td>
      <td className="mono">
        {s.cron} <span className="muted">{s.timezone}</span>
      </td>
      <td>
        {s.paused ? (
          <span className="muted">none while paused</span>
        ) : (
          <ul className="plain">
            {s.upcoming.slice(0, 3).map((at) => (
              <li key={at}>{formatTime(at)}</li>
            ))}
          </ul>
        )}
      </td>
      <td className="wide-only">
        {s.last_run_id ? (
          <Link to={`/runs/${s.last_run_id}`} className="mono">
            {shortId(s.last_run_id)}
          </Link>
        ) : (
          '—'
        )}{' '}
        {s.last_outcome && <span className="muted">{s.last_outcome}</span>}
      </td>
      <td>
        <ConfirmAction
          label={s.paused ? `Resume ${s.name}` : `Pause ${s.name}`}
          title={`${s.paused ? 'Resume' : 'Pause'} schedule ${s.name}`}
          explain={
            s.paused
              ? 'The schedule starts runs again from its next due time; times missed while paused are skipped.'
              : 'The schedule starts no run until it is resumed.'
          }
          act={async () => {
            await api.scheduleAction(s.name, s.paused ? 'resume' : 'pause');
            props.onChanged();
          }}
        />
      </td>
    </tr>
  );
}
