import { useQuery } from '@tanstack/react-query';
import { api } from '../api/endpoints.js';
import { ErrorNote } from '../components/error-note.js';
import { formatMs } from '../lib/format.js';
import { useNamespace } from '../lib/namespace-context.js';

const KINDS: Record<string, string> = {
  concurrency: 'Concurrency cap (tasks of a type at once)',
  semaphore: 'Semaphore (permits)',
  rate: 'Rate limit (starts per window)',
  quota: 'Quota (running runs)',
};

/** Limits, semaphores and quotas of the namespace, each with how much of it is in use now. */
export function LimitsPage() {
  const ns = useNamespace();
  const list = useQuery({ queryKey: ['limits', ns], queryFn: api.limits, refetchInterval: 3000 });
  return (
    <section aria-labelledby="limits-title">
      <h1 id="limits-title">Limits</h1>
      <ErrorNote error={list.error} what="Could not read the limits" />
      <table className="grid">
        <caption className="visually-hidden">Limits and their use</caption>
        <thead>
          <tr>
            <th scope="col">Kind</th>
            <th scope="col">Name</th>
            <th scope="col">In use</th>
            <th scope="col">Window</th>
          </tr>
        </thead>
        <tbody>
          {(list.data?.items ?? []).map((l) => (
            <tr key={`${l.kind}:${l.name}`}>
              <td>{KINDS[l.kind] ?? l.kind}</td>
              <td className="mono">{l.name || '—'}</td>
              <td>
                <meter
                  min={0}
                  max={Math.max(l.max, 1)}
                  value={Math.min(l.used, l.max)}
                  aria-label={`${l.used} of ${l.max} in use`}
                />{' '}
                {l.used} / {l.max}
              </td>
              <td>{l.per_ms === null ? '—' : formatMs(l.per_ms)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {list.data?.items.length === 0 && <p className="empty">No limit is set in this namespace.</p>}
    </section>
  );
}
