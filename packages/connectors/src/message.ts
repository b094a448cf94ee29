import type { Delivery, OutboxRow } from '@weft/engine';

/** A message as a sink sends it: its stable id, its type, where it goes (the topic, if any) and its JSON. */
export interface SinkMessage {
  readonly id: string;
  readonly type: string;
  readonly topic: string | null;
  readonly body: string;
}

/** The message an outbox row carries, or the permanent failure of a row no sink can send. */
export function sinkMessage(row: OutboxRow): SinkMessage | Delivery {
  const p = row.payload;
  if (p.kind !== 'publish' && p.kind !== 'webhook')
    return { kind: 'failed', error: `a sink cannot deliver a ${p.kind} row`, permanent: true };
  return {
    id: p.message.id,
    type: p.message.type,
    topic: p.kind === 'publish' ? p.topic : null,
    body: JSON.stringify(p.message),
  };
}

/** True when `x` is a Delivery (a row that could not be turned into a message). */
export function isDelivery(x: SinkMessage | Delivery): x is Delivery {
  return 'kind' in x;
}

/** The error text of a failed send. */
export function errorText(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  return String(error);
}
