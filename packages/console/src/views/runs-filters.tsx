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
  'attr',
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
      <DefinitionFields draft={draft} set={set} names={(definitions.data?.items ?? []).map((d) => d.name)} />
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
      <TimeField
        label="Started after"
        value={draft.started_after}
        onChange={(v) => set('started_after', v)}
      />
      <TimeField
        label="Started before"
        value={draft.started_before}
        onChange={(v) => set('started_before', v)}
      />
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
      <label>
        Attribute
        <input
          placeholder="name:value, such as customer:42"
          spellCheck={false}
          value={draft.attr ?? ''}
          onChange={(e) => set('attr', e.target.value)}
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

/** A local date and time, given and taken as an ISO time. */
function TimeField(props: {
  label: string;
  value: string | undefined;
  onChange: (iso: string | undefined) => void;
}) {
  return (
    <label>
      {props.label}
      <input
        type="datetime-local"
        value={toLocal(props.value)}
        onChange={(e) => props.onChange(toIso(e.target.value))}
      />
    </label>
  );
}

/** The definition and, with one, its version. */
function DefinitionFields(props: {
  draft: RunFilters;
  set: (field: keyof RunFilters, value: string | undefined) => void;
  names: string[];
}) {
  return (
    <>
      <label>
        Definition
        <select
          value={props.draft.definition ?? ''}
          onChange={(e) => props.set('definition', e.target.value)}
        >
          <option value="">any</option>
          {props.names.map((name) => (
            <option key={name} value={name}>
              {name}
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
          value={props.draft.version ?? ''}
          disabled={!props.draft.definition}
          onChange={(e) => props.set('version', e.target.value)}
        />
      </label>
    </>
  );
}
