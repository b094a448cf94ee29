import postgres, { type Sql } from 'postgres';

/** Options for a Weft connection pool. */
export interface ConnectOptions {
  /** Most connections in the pool. */
  readonly max?: number;
  /** Name shown in pg_stat_activity. */
  readonly applicationName?: string;
}

/**
 * Opens a connection pool. Queries are prepared once per connection and pipelined within transactions.
 * `int8` values come back as strings (they may exceed 2^53); Weft uses them only as ids.
 */
export function connect(url: string, options: ConnectOptions = {}): Sql {
  return postgres(url, {
    max: options.max ?? 10,
    prepare: true,
    onnotice: () => {},
    idle_timeout: 60,
    connection: { application_name: options.applicationName ?? 'weft' },
    transform: { undefined: null, column: { from: postgres.toCamel } },
  });
}
