import { readFileSync } from 'node:fs';
import { WeftError } from '@weft/core';

/** Where the server's TLS files are, in PEM. With `clientCaFile`, clients must present a certificate it signed. */
export interface TlsFileSettings {
  readonly certFile: string;
  readonly keyFile: string;
  readonly clientCaFile?: string;
}

/** What the HTTPS server is given: the certificate, its key, and for mutual TLS the clients' CA. */
export interface ServerTls {
  readonly cert: string;
  readonly key: string;
  readonly ca?: string;
  readonly requestCert?: boolean;
  readonly rejectUnauthorized?: boolean;
}

function read(file: string, setting: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (e) {
    throw new WeftError('bad_config', `cannot read ${setting} ${file}: ${(e as Error).message}`);
  }
}

/** Reads the TLS files; a missing or unreadable file stops the server, naming the setting. */
export function serverTls(files: TlsFileSettings): ServerTls {
  const tls: ServerTls = {
    cert: read(files.certFile, 'the TLS certificate (--tls-cert, WEFT_TLS_CERT)'),
    key: read(files.keyFile, 'the TLS key (--tls-key, WEFT_TLS_KEY)'),
  };
  if (!files.clientCaFile) return tls;
  return {
    ...tls,
    ca: read(files.clientCaFile, 'the client CA (--tls-client-ca, WEFT_TLS_CLIENT_CA)'),
    requestCert: true,
    rejectUnauthorized: true,
  };
}
