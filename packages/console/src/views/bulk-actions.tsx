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

/** Runs an action over every matching run, a batch per call, reporting progress after each batch. */
async function runBulk(
  action: Action,
  filters: RunFilters,
  reason: string,
  onProgress: (p: Progress) => void,
): Promise<void> {
  let cursor: string | undefined;
  let done = 0;
  let refused = 0;
  onProgress({ done, refused, finished: false });
  do {
    const batch = await api.bulk({
      action,
      filter: bulkFilter(filters),
      by: 'console',
      batch_size: 200,
      ...(reason ? { reason } : {}),
      ...(cursor ? { cursor } : {}),
    });
    done += batch.done;
    refused += batch.refused;
    cursor = batch.next_cursor ?? undefined;
    onProgress({ done, refused, finished: !cursor });
  } while (cursor);
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
  const [progress, setProgress] = useState<Progress | null>(null);
  const [error, setError] = useState<unknown>(null);
  const open = async (chosen: Action) => {
    setAction(chosen);
    setCount(null);
    setProgress(null);
    setError(null);
    try {
      setCount(await api.countRuns(props.filters));
    } catch (e) {
      setError(e);
    }
  };
  const act = async (reason: string) => {
    if (!action) return;
    await runBulk(action, props.filters, reason, setProgress).catch(setError);
    void queries.invalidateQueries({ queryKey: ['runs', ns] });
  };
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
        {action && (
          <BulkConfirm
            action={action}
            count={count}
            progress={progress}
            error={error}
            onConfirm={act}
            onClose={() => setAction(null)}
          />
        )}
      </Dialog>
    </fieldset>
  );
}

function BulkConfirm(props: {
  action: Action;
  count: { count: number; capped: boolean } | null;
  progress: Progress | null;
  error: unknown;
  onConfirm: (reason: string) => Promise<void>;
  onClose: () => void;
}) {
  const [reason, setReason] = useState('');
  const { action, count, progress } = props;
  const shown = count ? `${count.count.toLocaleString()}${count.capped ? '+' : ''}` : '';
  const blocked =
    !count || count.count === 0 || (action === 'terminate' && reason.trim() === '') || progress !== null;
  return (
    <>
      {count === null && !props.error && <p>Counting the runs that match…</p>}
      {count && (
        <p className="dry-run" aria-live="polite">
          <strong>{shown}</strong> run(s) match the filters
          {action === 'retry' ? ' (only failed, cancelled and terminated ones can be retried)' : ''}. Nothing
          has been done yet.
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
      <ErrorNote error={props.error} />
      <div className="actions">
        <button
          type="button"
          className="danger"
          disabled={blocked}
          onClick={() => void props.onConfirm(reason.trim())}
        >
          {action} {shown ? `${shown} run(s)` : ''}
        </button>
        <button type="button" className="secondary" onClick={props.onClose}>
          Close
        </button>
      </div>
    </>
  );
}
