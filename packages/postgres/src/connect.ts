import net from 'node:net';
import postgres, { type Sql } from 'postgres';
import { observeStatements } from './observe-statements.js';

/** Options for a Weft connection pool. */
export interface ConnectOptions {
  /** Most connections in the pool. */
  readonly max?: number;
  /** Name shown in pg_stat_activity. */
  readonly applicationName?: string;
  /**
   * Called with the text of every statement Weft's code sends through the pool (a tagged template's text with
   * `$n` for its values, or `unsafe`'s text): for the statements metric and for tests that read statements.
   */
  readonly onStatement?: (query: string) => void;
  /** Called with every notice PostgreSQL sends (for tests that read what the server logs to the client). */
  readonly onNotice?: (notice: { message?: string }) => void;
}

/**
 * Opens a connection pool. Queries are prepared once per connection and pipelined within transactions.
 * Sockets are opened with Nagle's algorithm off: pipelined statements are small writes sent back to back,
 * and with Nagle on, each waits for the previous one's acknowledgement.
 */
export function connect(url: string, options: ConnectOptions = {}): Sql {
  const sql = openPool(url, options);
  return options.onStatement ? observeStatements(sql, options.onStatement) : sql;
}

function openPool(url: string, options: ConnectOptions): Sql {
  // libpq's `?host=/path/to/socket-dir` selects a Unix-domain socket; the driver wants it as an option.
  const parsed = new URL(url);
  const socketDir = parsed.searchParams.get('host');
  if (socketDir) parsed.searchParams.delete('host');
  return postgres(parsed.toString(), {
    ...(socketDir ? { host: socketDir } : {}),
    max: options.max ?? 10,
    prepare: true,
    onnotice: options.onNotice ?? (() => {}),
    idle_timeout: 60,
    // Seconds before a closed connection is opened again, by failed attempts in a row (shared by the pool).
    // The driver's default grows to 20 s, so a server whose database came back kept failing for that long;
    // capped at 1 s, a query made while the database is down fails within a second and the caller retries.
    backoff: (attempts: number) => Math.min(0.05 * 2 ** attempts, 1),
    connection: {
      application_name: options.applicationName ?? 'weft',
      // Weft's statements look rows up by key, a batch at a time: they join `unnest` of parameter arrays to a
      // table. The planner cannot see a batch's size in a cached plan and, on a table of a few thousand rows,
      // picks a hash join over a full scan, whose cost then grows with the table. With hash and merge joins
      // off, every batch is a nested loop of index lookups: its cost follows the batch, not the table (test:
      // "the statements of a step read the rows of their own runs").
      enable_hashjoin: 'off',
      enable_mergejoin: 'off',
      // Weft's statements are prepared once per connection and are index lookups by key. Left to choose,
      // PostgreSQL plans each `unnest` batch afresh (it knows the array's length only for a custom plan),
      // which cost more than running it: about 0.08 ms a statement, 0.8 ms a report (docs/performance.md).
      plan_cache_mode: 'force_generic_plan',
      // JIT compilation starts when a plan's estimated cost passes `jit_above_cost`, and a plan with a
      // disabled scan (Weft's transactions turn sequential scans off) is estimated at 10^10 whatever it
      // reads. On a server built with JIT (most packaged ones), such a statement was compiled on every
      // execution: 0.5 to 1.5 s to lease a task by id, for a plan that runs in a millisecond. Weft's
      // statements are key lookups, which compiling never speeds up (test: "statements are never compiled").
      jit: 'off',
      // Weft's concurrency rules rely on READ COMMITTED: each statement of a transaction sees what committed
      // before it started (the last history number after the lock, the reads after the claim). A database
      // or role may default to another level; a connection's own setting takes precedence over both
      // (test: "a database's own defaults do not change what Weft's connections see").
      default_transaction_isolation: 'read committed',
      // The driver reads timestamps as ISO text; a database defaulting to another DateStyle ('SQL, DMY')
      // would turn every lease expiry and timer due time into a wrong or invalid date (same test).
      datestyle: 'ISO, MDY',
    },
    transform: { undefined: null, column: { from: postgres.toCamel } },
    // The driver supports a socket factory but its types do not declare it.
    ...({ socket: openSocket } as object),
  });
}

/**
 * Opens a TCP (or Unix-domain) socket to the server: no Nagle delay, writes of one tick sent together.
 *
 * The socket is handed over before it connects (Node buffers what is written meanwhile), never as a
 * rejected promise: the driver learns of a failed connection from the socket's 'error' and 'close'
 * events, and puts the connection back among the closed ones to retry later. A rejected promise skips
 * that step, so each connection tried while the database was down stayed "connecting" for good and,
 * once all had been tried, every query waited forever (test: database-restart.test.ts).
 */
function openSocket(o: { host: string[]; port: number[]; path?: string | false }): net.Socket {
  const host = o.host[0] ?? '127.0.0.1';
  const port = o.port[0] ?? 5432;
  const path = o.path || (host.startsWith('/') ? `${host}/.s.PGSQL.${port}` : undefined);
  const socket = path ? net.connect(path) : net.connect({ host, port, noDelay: true });
  return coalesceWrites(socket);
}

/**
 * Makes the writes of one turn of the event loop leave as one system call. A pipelined transaction hands
 * the driver several statements at once and the driver writes each large one as it comes; corking until
 * the next tick sends them together, which saves a system call and a wake-up of the server per statement.
 */
function coalesceWrites(socket: net.Socket): net.Socket {
  const write = socket.write.bind(socket) as (...args: unknown[]) => boolean;
  let corked = false;
  const uncork = () => {
    corked = false;
    socket.uncork();
  };
  socket.write = ((...args: unknown[]) => {
    if (!corked) {
      corked = true;
      socket.cork();
      process.nextTick(uncork);
    }
    return write(...args);
  }) as typeof socket.write;
  return socket;
}
