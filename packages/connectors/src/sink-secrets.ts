import { isWeftError, SECRET_PLACEHOLDER, secretNamesIn, WeftError } from '@weft/core';
import {
  type Delivery,
  type DeliveryContext,
  type Destination,
  type OutboxRow,
  REDACTED,
  sinkDestination,
} from '@weft/engine';
import { errorText } from './message.js';

/** Finds the values of secrets of a namespace by name; throws, naming what to do, for one that is not set. */
export type SecretResolver = (namespace: string, names: readonly string[]) => Promise<Map<string, string>>;

/**
 * `url` with each `{{secrets.NAME}}` replaced by the secret's value, percent-encoded: a password holding
 * `@`, `:` or `/` stays the password and does not move the host.
 */
export function fillUrlSecrets(url: string, values: ReadonlyMap<string, string>): string {
  return url.replace(SECRET_PLACEHOLDER, (whole, name: string) => {
    const value = values.get(name);
    return value === undefined ? whole : encodeURIComponent(value);
  });
}

/** `text` with each secret value (as given, and as written into a URL) replaced by `[redacted]`. */
export function redactValues(text: string, values: ReadonlyMap<string, string>): string {
  const forms = [...values.values()]
    .flatMap((v) => [v, encodeURIComponent(v)])
    .filter((v) => v.length >= 4)
    .sort((a, b) => b.length - a.length);
  return forms.reduce((acc, v) => acc.split(v).join(REDACTED), text);
}

/** One connection of the sink: the URL it was opened with and the destination that holds it. */
interface Opened {
  readonly url: string;
  readonly destination: Destination;
}

/**
 * A sink whose connection URL names secrets (`redis://weft:{{secrets.REDIS_PASSWORD}}@host:6379`). Each
 * batch's rows are grouped by namespace; the URL is filled from that namespace's secrets when the batch is
 * delivered, so a secret set or changed takes effect on the next delivery, and each distinct filled URL has
 * its own connection (`open` makes it). A secret that is not set fails those rows for good, naming how to
 * set it (they wait in the dead letters for a replay). Secret values never leave in an error's text.
 */
export function sinkWithUrlSecrets(
  name: string,
  url: string,
  secrets: SecretResolver | undefined,
  open: (url: string) => Destination,
): Destination {
  const names = secretNamesIn(url);
  const byUrl = new Map<string, Destination>();
  const byNamespace = new Map<string, string>();
  const connectionFor = async (namespace: string): Promise<Opened & { values: Map<string, string> }> => {
    if (!secrets)
      throw new WeftError(
        'secrets_not_configured',
        'its url names secrets, but this server cannot read secrets: set WEFT_SECRETS_KEY',
      );
    const values = await secrets(namespace, names);
    const filled = fillUrlSecrets(url, values);
    let destination = byUrl.get(filled);
    if (!destination) {
      destination = open(filled);
      byUrl.set(filled, destination);
    }
    const before = byNamespace.get(namespace);
    byNamespace.set(namespace, filled);
    // A secret changed: the connection made with its old value closes once no namespace uses it.
    if (before && before !== filled && ![...byNamespace.values()].includes(before)) {
      const old = byUrl.get(before);
      byUrl.delete(before);
      await old?.close?.().catch(() => {});
    }
    return { url: filled, destination, values };
  };
  return {
    name: sinkDestination(name),
    timeoutMs: 15_000,
    async deliver(rows, context) {
      const out: Delivery[] = new Array(rows.length);
      for (const [namespace, indexes] of groupByNamespace(rows)) {
        const group = indexes.map((i) => rows[i]!);
        const delivered = await deliverGroup(name, namespace, group, context, connectionFor);
        indexes.forEach((i, k) => {
          out[i] = delivered[k]!;
        });
      }
      return out;
    },
    async close() {
      const all = [...byUrl.values()];
      byUrl.clear();
      byNamespace.clear();
      await Promise.allSettled(all.map((d) => d.close?.()));
    },
  };
}

async function deliverGroup(
  sink: string,
  namespace: string,
  rows: OutboxRow[],
  context: DeliveryContext,
  connectionFor: (namespace: string) => Promise<Opened & { values: Map<string, string> }>,
): Promise<Delivery[]> {
  let opened: Opened & { values: Map<string, string> };
  try {
    opened = await connectionFor(namespace);
  } catch (error) {
    const message = `sink "${sink}" in namespace "${namespace}": ${errorText(error)}`;
    // A secret not set (or no key to open it) waits for a person: the dead letters, for a replay. Anything
    // else (the database briefly away) backs off and tries again like any failed delivery.
    const permanent = isWeftError(error, 'secret_not_found') || isWeftError(error, 'secrets_not_configured');
    return rows.map(() => ({ kind: 'failed', error: message, ...(permanent ? { permanent } : {}) }));
  }
  try {
    const delivered = await opened.destination.deliver(rows, context);
    return delivered.map((d) =>
      d.kind === 'failed' ? { ...d, error: redactValues(d.error, opened.values) } : d,
    );
  } catch (error) {
    const message = redactValues(errorText(error), opened.values);
    return rows.map(() => ({ kind: 'failed', error: message }));
  }
}

function groupByNamespace(rows: readonly OutboxRow[]): Map<string, number[]> {
  const groups = new Map<string, number[]>();
  rows.forEach((row, i) => {
    const list = groups.get(row.namespace) ?? [];
    list.push(i);
    groups.set(row.namespace, list);
  });
  return groups;
}
