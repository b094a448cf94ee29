import { useState } from 'react';
import type { HistoryEvent } from '../api/types.js';
import { JsonView } from '../components/json-view.js';

/** Events that record something refused or ignored: shown marked, so they stand out in the timeline. */
export function isRefusal(event: HistoryEvent): boolean {
  if (/refused|ignored/.test(event.type)) return true;
  const data = event.data as { outcome?: unknown } | null;
  return event.type === 'signal.received' && data?.outcome === 'refused';
}

function summary(event: HistoryEvent): string {
  const data = event.data;
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return '';
  const d = data as Record<string, unknown>;
  const parts: string[] = [];
  for (const key of ['why', 'reason', 'by', 'worker', 'name', 'outcome', 'message']) {
    if (typeof d[key] === 'string') parts.push(`${key}: ${d[key]}`);
  }
  const error = d.error as { message?: unknown } | undefined;
  if (error && typeof error.message === 'string') parts.push(`error: ${error.message}`);
  return parts.join(' · ');
}

/**
 * A run's history as a timeline: sequence number, time, event, node and the details of each, live as
 * the stream brings them. Refused reports and refused signals are marked.
 */
export function Timeline(props: { events: HistoryEvent[]; onNode?: (nodeId: string) => void }) {
  const [open, setOpen] = useState<number | null>(null);
  return (
    <table className="grid compact timeline">
      <caption>History</caption>
      <thead>
        <tr>
          <th scope="col">#</th>
          <th scope="col">Time</th>
          <th scope="col">Event</th>
          <th scope="col">Node</th>
          <th scope="col">Details</th>
        </tr>
      </thead>
      <tbody>
        {props.events.map((e) => (
          <tr key={e.seq} className={isRefusal(e) ? 'refusal' : undefined}>
            <td>{e.seq}</td>
            <td className="nowrap">
              {new Date(e.at).toLocaleTimeString(undefined, { hour12: false })}.
              {String(new Date(e.at).getMilliseconds()).padStart(3, '0')}
            </td>
            <td className="mono">
              {e.type}
              {isRefusal(e) && <span className="visually-hidden"> (refused)</span>}
            </td>
            <td className="mono">
              {e.node_id ? (
                <button type="button" className="link" onClick={() => props.onNode?.(e.node_id!)}>
                  {e.node_id}
                  {e.iteration ? `[${e.iteration}]` : ''}
                  {e.attempt ? ` #${e.attempt}` : ''}
                </button>
              ) : (
                '—'
              )}
            </td>
            <td>
              <span>{summary(e)}</span>{' '}
              <button
                type="button"
                className="link"
                aria-expanded={open === e.seq}
                onClick={() => setOpen(open === e.seq ? null : e.seq)}
              >
                {open === e.seq ? 'hide data' : 'data'}
              </button>
              {open === e.seq && <JsonView value={e.data} label={`Data of event ${e.seq}`} />}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
