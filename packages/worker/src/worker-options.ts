import type { TlsFiles } from '@weft/client/tasks';
import type { WorkerLogger } from './problems.js';
import type { Handler } from './task-context.js';

/** How a worker runs. */
export interface WorkerOptions {
  /** The Weft server, such as http://127.0.0.1:8080. */
  readonly url: string;
  /** TLS files for an `https` URL; by default from WEFT_CA_FILE, WEFT_CLIENT_CERT and WEFT_CLIENT_KEY. */
  readonly tls?: TlsFiles;
  readonly namespace?: string;
  /** The API key (a worker key), sent as `Authorization: Bearer <key>`; by default `WEFT_API_KEY`. */
  readonly apiKey?: string;
  /** Headers sent with every request (a proxy's own credentials, say). */
  readonly headers?: Readonly<Record<string, string>>;
  /** The worker's name in leases and history; host-pid-random by default. */
  readonly name?: string;
  /** Handlers by task type. */
  readonly handlers: Readonly<Record<string, Handler>>;
  /** Most tasks run at once (default 10). */
  readonly concurrency?: number;
  /** How long one poll waits on the server when no task is ready (default 20 s). */
  readonly pollWaitMs?: number;
  /**
   * Report requests in flight at once (default 2). Results finishing while reports are in flight go in
   * the next batch; a second request lets the server work on two batches at the same time.
   */
  readonly reportsInFlight?: number;
  /** Called with problems the worker recovers from (a failed request, a lost lease). */
  readonly onProblem?: (message: string, error?: unknown) => void;
  /**
   * Where problems are logged (unreachable server, refused reports, lost leases): `console` by default,
   * any object with `warn`, or `null` for nothing. A request that keeps failing is logged once.
   */
  readonly logger?: WorkerLogger | null;
  /** How long `start()` tries to reach the server before it fails (default 10 s). */
  readonly connectTimeoutMs?: number;
  /**
   * Redis, for a server that dispatches through Redis (it says so at `GET /v1/tasks/dispatch`): the worker
   * then reads task messages from Redis streams and leases each task through the server, and asks the
   * server's queue for tasks under limits, which are never announced on Redis. Ignored when the server
   * dispatches through its own queue. Defaults to the REDIS_URL environment variable.
   */
  readonly redisUrl?: string;
}
