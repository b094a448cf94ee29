import { readFileSync } from 'node:fs';

/**
 * How a client checks the server's certificate and proves itself: files in PEM. `caFile` trusts a CA
 * (a private one, or a self-signed server certificate) in addition to the system's; `certFile` and
 * `keyFile` are the client certificate for a server that asks for one (mutual TLS).
 */
export interface TlsFiles {
  readonly caFile?: string;
  readonly certFile?: string;
  readonly keyFile?: string;
}

/** TLS files from the environment: `WEFT_CA_FILE`, `WEFT_CLIENT_CERT`, `WEFT_CLIENT_KEY`. */
export function tlsFilesFromEnv(env: NodeJS.ProcessEnv = process.env): TlsFiles {
  return {
    ...(env.WEFT_CA_FILE ? { caFile: env.WEFT_CA_FILE } : {}),
    ...(env.WEFT_CLIENT_CERT ? { certFile: env.WEFT_CLIENT_CERT } : {}),
    ...(env.WEFT_CLIENT_KEY ? { keyFile: env.WEFT_CLIENT_KEY } : {}),
  };
}

function read(file: string, what: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (e) {
    throw new Error(`cannot read the ${what} ${file}: ${(e as Error).message}`);
  }
}

/** The connect options (for an undici Agent or `tls.connect`) the files give; empty without files. */
export function tlsConnectOptions(files: TlsFiles): { ca?: string[]; cert?: string; key?: string } {
  if ((files.certFile === undefined) !== (files.keyFile === undefined))
    throw new Error(
      'a client certificate needs both its certificate and its key file (WEFT_CLIENT_CERT and WEFT_CLIENT_KEY)',
    );
  return {
    // The CA is added to the system's roots, so public servers still verify. TLS is loaded only for it.
    ...(files.caFile
      ? { ca: [...process.getBuiltinModule('node:tls').rootCertificates, read(files.caFile, 'CA file')] }
      : {}),
    ...(files.certFile ? { cert: read(files.certFile, 'client certificate') } : {}),
    ...(files.keyFile ? { key: read(files.keyFile, 'client key') } : {}),
  };
}
