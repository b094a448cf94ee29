import type { TlsFileSettings } from '@weft/server';
import { CliError } from '../errors.js';

/** The TLS flags of `weft server` and `weft dev`. */
export interface TlsFlags {
  readonly tlsCert?: string;
  readonly tlsKey?: string;
  readonly tlsClientCa?: string;
}

/** The server's TLS files from the flags, or none; a certificate without its key (or the reverse) is refused. */
export function tlsSettings(flags: TlsFlags): { tls?: TlsFileSettings } {
  if (!flags.tlsCert && !flags.tlsKey) {
    if (flags.tlsClientCa) throw new CliError('--tls-client-ca needs --tls-cert and --tls-key');
    return {};
  }
  if (!flags.tlsCert || !flags.tlsKey)
    throw new CliError('HTTPS needs both --tls-cert and --tls-key (or WEFT_TLS_CERT and WEFT_TLS_KEY)');
  return {
    tls: {
      certFile: flags.tlsCert,
      keyFile: flags.tlsKey,
      ...(flags.tlsClientCa ? { clientCaFile: flags.tlsClientCa } : {}),
    },
  };
}
