import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { api, type RunFilters } from '../api/endpoints.js';
import type { RunSummary } from '../api/types.js';
import { ErrorNote } from '../components/error-note.js';
import { StatusBadge } from '../components/status-badge.js';
import { formatDuration, formatTime, shortId } from '../lib/format.js';
import { useNamespace } from '../lib/namespace-context.js';
import { BulkActions } from './bulk-actions.js';
import { FILTER_FIELDS, RunsFilters } from './runs-filters.js';

/** How often the page of runs is read again, so that statuses change on screen as runs move. */
export const RUNS_REFRESH_MS = 2000;

function filtersOf(params: URLSearchParams): RunFilters {
  const out: RunFilters = {};
  for (const field of FILTER_FIELDS) {
    const value = params.get(field);
    if (value) out[field] = value;
  }
  return out;
}

/**
 * Runs, newest first: filters, pages read on the server (a cursor per page), statuses kept current by
 * reading the page again every two seconds, and bulk actions over everything the filters match.
 */
export function RunsPage() {
  const ns = useNamespace();
  const [params, setParams] = useSearchParams();
  const filters = filtersOf(params);
  // The cursors of the pages before this one, to go back.
  const [trail, setTrail] = useState<string[]>([]);
  const cursor = params.get('cursor') ?? undefined;
  const page = useQuery({
    queryKey: ['runs', ns, filters, cursor],
    queryFn: () => api.runs(filters, cursor),
    refetchInterval: RUNS_REFRESH_MS,
    placeholderData: keepPreviousData,
  });
  const apply = (next: RunFilters) => {
    setTrail([]);
    setParams(Object.fromEntries(Object.entries(next).filter(([, v]) => v)) as Record<string, string>);
  };
  const go = (to: string | undefined, back: boolean) => {
    const next = new URLSearchParams(params);
    if (to) next.set('cursor', to);
    else next.delete('cursor');
    setTrail((t) => (back ? t.slice(0, -1) : [...t, cursor ?? '']));
    setParams(next);
  };
  return (
    <section aria-labelledby="runs-title">
      <div className="page-head">
        <h1 id="runs-title">Runs</h1>
        <BulkActions filters={filters} />
      </div>
      <RunsFilters key={params.toString()} value={filters} onApply={apply} />
      <ErrorNote error={page.error} what="Could not list runs" />
      <RunsTable runs={page.data?.items} />
      {page.data && page.data.items.length === 0 && <p className="empty">No run matches these filters.</p>}
      <nav className="pager" aria-label="Pages of runs">
        <button
          type="button"
          className="secondary"
          disabled={trail.length === 0}
          onClick={() => go(trail.at(-1) || undefined, true)}
        >
          ← Newer
        </button>
        <button
          type="button"
          className="secondary"
          disabled={!page.data?.next_cursor}
          onClick={() => go(page.data?.next_cursor ?? undefined, false)}
        >
          Older →
        </button>
      </nav>
    </section>
  );
}

function RunsTable(props: { runs: RunSummary[] | undefined }) {
  return (
    <table className="grid">
      <caption className="visually-hidden">Runs, newest first; statuses update every two seconds</caption>
      <thead>
        <tr>
          <th scope="col">Run</th>
          <th scope="col">Definition</th>
          <th scope="col">Status</th>
          <th scope="col">Started</th>
          <th scope="col" className="wide-only">
            Took
          </th>
        </tr>
      </thead>
      <tbody>
        {(props.runs ?? []).map((run) => (
          <tr key={run.id}>
            <td>
              <Link to={`/runs/${run.id}`} title={run.id} className="mono">
                {shortId(run.id)}
              </Link>
            </td>
            <td>
              {run.definition} <span className="muted">v{run.version}</span>
            </td>
            <td>
              <StatusBadge status={run.status} />
            </td>
            <td>{formatTime(run.created_at)}</td>
            <td className="wide-only">
              {run.finished_at ? formatDuration(run.created_at, run.finished_at) : '…'}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
