import { useQuery } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { api, type RunFilters } from '../api/endpoints.js';
import { RUN_STATUSES } from '../api/types.js';

/** The filter fields, in the order the form shows them. */
export const FILTER_FIELDS = [
  'definition',
  'version',
  'status',
  'started_after',
  'started_before',
  'run_id',
  'idempotency_key',
] as const;

/** A local date-time input's value as an ISO time, or undefined when empty. */
function toIso(local: string): string | undefined {
  if (!local) return undefined;
  const at = new Date(local);
  return Number.isNaN(at.getTime()) ? undefined : at.toISOString();
}

/** An ISO time as a local date-time input's value. */
function toLocal(iso: string | undefined): string {
  if (!iso) return '';
  const at = new Date(iso);
  if (Number.isNaN(at.getTime())) return '';
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${at.getFullYear()}-${pad(at.getMonth() + 1)}-${pad(at.getDate())}T${pad(at.getHours())}:${pad(at.getMinutes())}`;
}

/** The runs table's filters: applied on submit, kept in the page's address so a view can be shared. */
export function RunsFilters(props: { value: RunFilters; onApply: (filters: RunFilters) => void }) {
  const [draft, setDraft] = useState<RunFilters>(props.value);
  const definitions = useQuery({ queryKey: ['definitions'], queryFn: api.definitions, staleTime: 10_000 });
  const set = (field: keyof RunFilters, value: string | undefined) =>
    setDraft((d) => ({ ...d, [field]: value || undefined }));
  const submit = (event: FormEvent) => {
    event.preventDefault();
    props.onApply(draft);
  };
  return (
    <form className="filters" onSubmit={submit} aria-label="Filter runs">
      <label>
        Definition
        <select value={draft.definition ?? ''} onChange={(e) => set('definition', e.target.value)}>
          <option value="">any</option>
          {(definitions.data?.items ?? []).map((d) => (
            <option key={d.name} value={d.name}>
              {d.name}
            </option>
          ))}
        </select>
      </label>
      <label>
        Version
        <input
          type="number"
          min={1}
          inputMode="numeric"
          value={draft.version ?? ''}
          disabled={!draft.definition}
          onChange={(e) => set('version', e.target.value)}
        />
      </label>
      <label>
        Status
        <select value={draft.status ?? ''} onChange={(e) => set('status', e.target.value)}>
          <option value="">any</option>
          {RUN_STATUSES.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
      </label>
      <label>
        Started after
        <input
          type="datetime-local"
          value={toLocal(draft.started_after)}
          onChange={(e) => set('started_after', toIso(e.target.value))}
        />
      </label>
      <label>
        Started before
        <input
          type="datetime-local"
          value={toLocal(draft.started_before)}
          onChange={(e) => set('started_before', toIso(e.target.value))}
        />
      </label>
      <label>
        Run id
        <input
          placeholder="id or its start"
          spellCheck={false}
          value={draft.run_id ?? ''}
          onChange={(e) => set('run_id', e.target.value.trim())}
        />
      </label>
      <label>
        Idempotency key
        <input
          spellCheck={false}
          value={draft.idempotency_key ?? ''}
          onChange={(e) => set('idempotency_key', e.target.value)}
        />
      </label>
      <div className="filter-actions">
        <button type="submit">Apply filters</button>
        <button
          type="button"
          className="secondary"
          onClick={() => {
            setDraft({});
            props.onApply({});
          }}
        >
          Clear
        </button>
      </div>
    </form>
  );
}
