import { useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, type RunFilters } from '../api/endpoints.js';
import { Dialog } from '../components/dialog.js';
import { ErrorNote } from '../components/error-note.js';
import { useNamespace } from '../lib/namespace-context.js';

type Action = 'cancel' | 'terminate' | 'retry';

interface Progress {
  done: number;
  refused: number;
  finished: boolean;
}

/** The bulk filter: the runs table's filters, with the version as a number. */
function bulkFilter(filters: RunFilters): Record<string, string | number> {
  const out: Record<string, string | number> = {};
  for (const [field, value] of Object.entries(filters)) {
    if (value) out[field] = field === 'version' ? Number(value) : value;
  }
  return out;
}

/**
 * Cancel, terminate or retry every run the filters match. The dialog first shows how many runs match
 * (counted by the server, nothing done yet), then asks for a reason; confirming runs the action batch
 * by batch and shows what was done and what was refused.
 */
export function BulkActions(props: { filters: RunFilters }) {
  const ns = useNamespace();
  const queries = useQueryClient();
  const [action, setAction] = useState<Action | null>(null);
  const [count, setCount] = useState<{ count: number; capped: boolean } | null>(null);
  const [reason, setReason] = useState('');
  const [progress, setProgress] = useState<Progress | null>(null);
  const [error, setError] = useState<unknown>(null);
  const open = async (chosen: Action) => {
    setAction(chosen);
    setCount(null);
    setProgress(null);
    setError(null);
    setReason('');
    try {
      setCount(await api.countRuns(props.filters));
    } catch (e) {
      setError(e);
    }
  };
  const run = async () => {
    if (!action) return;
    let cursor: string | undefined;
    let done = 0;
    let refused = 0;
    setProgress({ done, refused, finished: false });
    try {
      do {
        const batch = await api.bulk({
          action,
          filter: bulkFilter(props.filters),
          by: 'console',
          batch_size: 200,
          ...(reason ? { reason } : {}),
          ...(cursor ? { cursor } : {}),
        });
        done += batch.done;
        refused += batch.refused;
        setProgress({ done, refused, finished: false });
        cursor = batch.next_cursor ?? undefined;
      } while (cursor);
      setProgress({ done, refused, finished: true });
    } catch (e) {
      setError(e);
    }
    void queries.invalidateQueries({ queryKey: ['runs', ns] });
  };
  const needsReason = action === 'terminate' && reason.trim() === '';
  return (
    <fieldset className="bulk">
      <legend className="visually-hidden">Bulk actions on the runs the filters match</legend>
      <span className="tool-label">All matching:</span>
      {(['cancel', 'terminate', 'retry'] as const).map((a) => (
        <button key={a} type="button" className="secondary" onClick={() => void open(a)}>
          {a[0]!.toUpperCase() + a.slice(1)}…
        </button>
      ))}
      <Dialog open={action !== null} title={`${action ?? ''} matching runs`} onClose={() => setAction(null)}>
        {count === null && !error && <p>Counting the runs that match…</p>}
        {count && (
          <p className="dry-run" aria-live="polite">
            <strong>
              {count.count.toLocaleString()}
              {count.capped ? '+' : ''}
            </strong>{' '}
            run(s) match the filters
            {action === 'retry' ? ' (only failed, cancelled and terminated ones can be retried)' : ''}.
            Nothing has been done yet.
          </p>
        )}
        <label>
          Reason {action === 'terminate' ? '(required)' : '(optional)'}
          <textarea value={reason} onChange={(e) => setReason(e.target.value)} rows={2} />
        </label>
        {progress && (
          <p aria-live="polite">
            {progress.finished ? 'Finished' : 'Working'}: {progress.done} done, {progress.refused} refused.
          </p>
        )}
        <ErrorNote error={error} />
        <div className="actions">
          <button
            type="button"
            className="danger"
            disabled={
              !count ||
              count.count === 0 ||
              needsReason ||
              (progress !== null && !progress.finished) ||
              progress?.finished
            }
            onClick={() => void run()}
          >
            {action} {count ? `${count.count.toLocaleString()}${count.capped ? '+' : ''} run(s)` : ''}
          </button>
          <button type="button" className="secondary" onClick={() => setAction(null)}>
            Close
          </button>
        </div>
      </Dialog>
    </fieldset>
  );
}
