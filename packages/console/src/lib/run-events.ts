import { EventSource } from 'eventsource';
import { useEffect, useState } from 'react';
import { authRequired, sessionHeaders } from '../api/session.js';
import type { HistoryEvent } from '../api/types.js';

/** Where a live history stream stands. */
export type StreamState = 'connecting' | 'live' | 'reconnecting' | 'closed';

/**
 * A run's history, live: `GET /v1/runs/{id}/events` as Server-Sent Events. The stream is read with
 * fetch (the browser's EventSource cannot send an Authorization header), and a dropped connection is
 * resumed by the EventSource protocol with Last-Event-ID, so no event is missed or repeated; events are
 * kept by sequence number all the same. A 401 opens the key prompt; the stream starts again once the key
 * changes (the page re-renders with a new `generation`).
 */
export function useRunEvents(
  runId: string,
  generation: number,
): { events: HistoryEvent[]; state: StreamState } {
  const [events, setEvents] = useState<HistoryEvent[]>([]);
  const [state, setState] = useState<StreamState>('connecting');
  // biome-ignore lint/correctness/useExhaustiveDependencies: a new generation (key or namespace changed) starts the stream again
  useEffect(() => {
    setEvents([]);
    setState('connecting');
    const seen = new Map<number, HistoryEvent>();
    let pending: HistoryEvent[] = [];
    let flush: number | null = null;
    const source = new EventSource(`/v1/runs/${encodeURIComponent(runId)}/events`, {
      fetch: async (input, init) => {
        const response = await fetch(input, { ...init, headers: { ...init.headers, ...sessionHeaders() } });
        if (response.status === 401) authRequired();
        return response;
      },
    });
    source.onopen = () => setState('live');
    source.onerror = () => setState(source.readyState === EventSource.CLOSED ? 'closed' : 'reconnecting');
    source.onmessage = (message) => {
      const event = JSON.parse(message.data) as HistoryEvent;
      if (seen.has(event.seq)) return;
      seen.set(event.seq, event);
      pending.push(event);
      // Events arrive in bursts: show them together, every 50 ms at most, not once each.
      flush ??= window.setTimeout(() => {
        flush = null;
        const batch = pending;
        pending = [];
        setEvents((old) => [...old, ...batch].sort((a, b) => a.seq - b.seq));
      }, 50);
    };
    return () => {
      source.close();
      if (flush !== null) clearTimeout(flush);
    };
  }, [runId, generation]);
  return { events, state };
}
