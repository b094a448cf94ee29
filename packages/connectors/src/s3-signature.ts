import aws4 from 'aws4';

/** One request to S3, before it is signed. */
export interface S3Request {
  readonly method: string;
  /** The Host header as sent: the endpoint's host, with its port when it has one. */
  readonly host: string;
  /** The path, as sent. */
  readonly path: string;
  /** Headers to send and sign (Range, Content-Type...). */
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: Buffer;
}

/** The credentials requests are signed with. */
export interface S3Credentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string;
}

/** AWS's basic ISO 8601 form: 20130524T000000Z. */
function amzDate(at: Date): string {
  return at
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
}

/**
 * The headers (Host aside) that sign `request` for S3 with AWS Signature Version 4 (through the `aws4`
 * package) as of `at`: X-Amz-Date, X-Amz-Content-Sha256 (the body's hash), Authorization, and the
 * request's own headers, every one of them signed.
 */
export function signS3Request(
  request: S3Request,
  region: string,
  credentials: S3Credentials,
  at: Date,
): Record<string, string> {
  const own = request.headers ?? {};
  // aws4 leaves some headers (Range among them) out of the signature unless told to include them.
  const include = Object.fromEntries(Object.keys(own).map((k) => [k.toLowerCase(), true]));
  const toSign: aws4.Request & { extraHeadersToInclude: Record<string, boolean> } = {
    host: request.host,
    path: request.path,
    method: request.method,
    service: 's3',
    region,
    headers: { ...own, 'X-Amz-Date': amzDate(at) },
    extraHeadersToInclude: include,
    ...(request.body ? { body: request.body } : {}),
  };
  const signed = aws4.sign(toSign, {
    accessKeyId: credentials.accessKeyId,
    secretAccessKey: credentials.secretAccessKey,
    ...(credentials.sessionToken ? { sessionToken: credentials.sessionToken } : {}),
  });
  const headers: Record<string, string> = {};
  // fetch sets host and content-length itself (to the values signed); given twice, a strict HTTP client
  // (undici 7, the process's global dispatcher once any module imports it) refuses the request.
  for (const [k, v] of Object.entries(signed.headers ?? {}))
    if (k.toLowerCase() !== 'host' && k.toLowerCase() !== 'content-length') headers[k] = String(v);
  return headers;
}
