import { BlockList, isIP } from 'node:net';

/** The setting that opens addresses Weft refuses to call by default. */
export const OUTBOUND_ALLOW_SETTING = 'WEFT_OUTBOUND_ALLOW';

/** Host names refused by name, whatever they resolve to: cloud metadata services. */
const REFUSED_NAMES = new Set(['metadata.google.internal', 'metadata.google.internal.', 'metadata']);

/**
 * Ranges refused by default: what would let a definition reach the server's own machine or network.
 * `[network, prefix, what]`; the cloud metadata addresses fall inside link-local and unique-local.
 */
const REFUSED_RANGES: readonly (readonly [string, number, string])[] = [
  ['0.0.0.0', 8, 'unspecified'],
  ['127.0.0.0', 8, 'loopback'],
  ['10.0.0.0', 8, 'private'],
  ['172.16.0.0', 12, 'private'],
  ['192.168.0.0', 16, 'private'],
  ['100.64.0.0', 10, 'shared (carrier-grade NAT)'],
  ['169.254.0.0', 16, 'link-local'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'],
  ['::', 128, 'unspecified'],
  ['::1', 128, 'loopback'],
  ['fc00::', 7, 'private'],
  ['fe80::', 10, 'link-local'],
  ['ff00::', 8, 'multicast'],
];

/** Why an outbound call was refused: terminal, never retried. */
export class OutboundRefused extends Error {
  readonly code = 'WEFT_OUTBOUND_REFUSED';
  constructor(host: string, what: string) {
    super(
      `refused to call ${host} (${what}): Weft does not call loopback, private, link-local or cloud ` +
        `metadata addresses unless the operator opens them with ${OUTBOUND_ALLOW_SETTING} ` +
        '(host names, addresses or CIDR ranges, comma-separated)',
    );
    this.name = 'OutboundRefused';
  }
}

/** The `OutboundRefused` in an error or its causes, if any. */
export function refusalIn(error: unknown): OutboundRefused | undefined {
  for (let e = error, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++)
    if (e instanceof OutboundRefused) return e;
  return undefined;
}

/** Which addresses outbound calls (`http` nodes, webhooks, status callbacks) may reach. */
export interface OutboundPolicy {
  /** Throws OutboundRefused when `host` (a name or a literal address) is refused by name or address. */
  checkHost(host: string): void;
  /** Throws OutboundRefused when `address`, which `host` resolved to, is refused. */
  checkAddress(host: string, address: string): void;
}

/** IPv4-mapped IPv6 addresses (`::ffff:127.0.0.1`) are judged as the IPv4 address they carry. */
function unmap(address: string): string {
  const m = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return m ? m[1]! : address;
}

function family(address: string): 'ipv4' | 'ipv6' {
  return isIP(address) === 6 ? 'ipv6' : 'ipv4';
}

/**
 * Parses an allow-list: host names (`hooks.internal`), addresses (`10.1.2.3`, `::1`) and CIDR ranges
 * (`10.0.0.0/8`). Throws a message naming the bad entry.
 */
export function parseOutboundAllow(value: string | readonly string[] | undefined): string[] {
  const entries = typeof value === 'string' ? value.split(',') : [...(value ?? [])];
  const out = entries.map((e) => e.trim().toLowerCase()).filter((e) => e !== '');
  for (const entry of out) {
    const [address, prefix, extra] = entry.split('/');
    if (prefix === undefined) continue;
    const bits = isIP(address!) === 6 ? 128 : 32;
    if (extra !== undefined || !isIP(address!) || !/^\d+$/.test(prefix) || Number(prefix) > bits)
      throw new Error(
        `${OUTBOUND_ALLOW_SETTING}: ${JSON.stringify(entry)} is not a host, an address or a CIDR range ` +
          '(such as 10.0.0.0/8)',
      );
  }
  return out;
}

/** The policy that refuses internal addresses except those `allow` opens (see parseOutboundAllow). */
export function outboundPolicy(allow?: string | readonly string[]): OutboundPolicy {
  const hosts = new Set<string>();
  const opened = new BlockList();
  for (const entry of parseOutboundAllow(allow)) {
    const [address, prefix] = entry.split('/');
    if (prefix !== undefined) opened.addSubnet(address!, Number(prefix), family(address!));
    else if (isIP(entry)) opened.addAddress(entry, family(entry));
    else hosts.add(entry.replace(/\.$/, ''));
  }
  const refused = REFUSED_RANGES.map(([network, prefix, what]) => {
    const list = new BlockList();
    list.addSubnet(network, prefix, family(network));
    return { list, what };
  });
  const hostOpened = (host: string) =>
    hosts.has(
      host
        .toLowerCase()
        .replace(/^\[|\]$/g, '')
        .replace(/\.$/, ''),
    );
  const checkAddress = (host: string, raw: string) => {
    if (hostOpened(host)) return;
    const address = unmap(raw.replace(/^\[|\]$/g, ''));
    const type = family(address);
    if (opened.check(address, type)) return;
    const hit = refused.find((r) => r.list.check(address, type));
    if (hit) throw new OutboundRefused(host === address ? address : `${host} at ${address}`, hit.what);
  };
  return {
    checkHost(host) {
      if (hostOpened(host)) return;
      const bare = host.replace(/^\[|\]$/g, '');
      if (REFUSED_NAMES.has(bare.toLowerCase())) throw new OutboundRefused(bare, 'cloud metadata');
      if (isIP(bare)) checkAddress(bare, bare);
    },
    checkAddress,
  };
}
