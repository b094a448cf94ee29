/** What names in a definition may look like, and the longest duration one may name. */

/** Definition names: letters, digits, `.`, `_` and `-`, starting with a letter or digit. */
export const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
/** Node ids are plain identifiers, so that expressions can read them as `nodes.<id>`. */
export const NODE_ID_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
/** Task types: what workers poll for. */
export const TASK_TYPE_PATTERN = /^[A-Za-z0-9_][A-Za-z0-9_.:/-]{0,127}$/;
/** Signal names: what `weft signal RUN NAME` sends and `wait_for_event` waits for. */
export const SIGNAL_NAME_PATTERN = /^[A-Za-z0-9_][A-Za-z0-9_.:/-]{0,127}$/;
/** Sink names: what the server's sink configuration calls them. */
export const SINK_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** Longest timeout, delay or wait a definition may name: a year. */
export const MAX_DURATION_MS = 365 * 86_400_000;
/** Event names: what `POST /v1/events` (and `weft emit`) sends and a definition's `triggers` listen for. */
export const EVENT_NAME_PATTERN = /^[A-Za-z0-9_][A-Za-z0-9_.:/-]{0,127}$/;
