const tty = process.stdout.isTTY && !process.env.NO_COLOR;

/** Wraps text in an ANSI colour when writing to a terminal. */
export const color = {
  green: (s: string) => (tty ? `\x1b[32m${s}\x1b[0m` : s),
  red: (s: string) => (tty ? `\x1b[31m${s}\x1b[0m` : s),
  yellow: (s: string) => (tty ? `\x1b[33m${s}\x1b[0m` : s),
  dim: (s: string) => (tty ? `\x1b[2m${s}\x1b[0m` : s),
  bold: (s: string) => (tty ? `\x1b[1m${s}\x1b[0m` : s),
};

/** Colours a run or task status by what it means. */
export function status(s: string): string {
  if (s === 'completed') return color.green(s);
  if (s === 'failed' || s === 'timed_out' || s === 'terminated') return color.red(s);
  if (s === 'cancelled' || s === 'skipped') return color.dim(s);
  return color.yellow(s);
}

const ANSI = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g');

/** Formats rows as an aligned text table with a header. */
export function table(header: string[], rows: string[][]): string {
  const width = header.map((h, i) =>
    Math.max(h.length, ...rows.map((r) => (r[i] ?? '').replace(ANSI, '').length)),
  );
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c + ' '.repeat(width[i]! - c.replace(ANSI, '').length)))
      .join('  ');
  return [color.bold(line(header)), ...rows.map(line)].join('\n');
}

/** Shortens JSON for a table cell. */
export function brief(value: unknown, max = 60): string {
  if (value === null || value === undefined) return '';
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** Milliseconds between two ISO times, formatted; empty when either is missing. */
export function elapsed(from: string | null, to: string | null): string {
  if (!from || !to) return '';
  const ms = Date.parse(to) - Date.parse(from);
  return ms < 1000 ? `${ms}ms` : `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)}s`;
}

let json = false;

/** Turns `--json` on or off for the rest of the command (the program sets it from its global option). */
export function setJsonOutput(on: boolean): void {
  json = on;
}

/** True when the command was given `--json`: results go to stdout as JSON, and nothing else does. */
export function jsonOutput(): boolean {
  return json;
}

/**
 * Prints a command's result: with `--json` the value itself as one line of JSON, otherwise what `text`
 * makes of it. Every command prints its result through here, so every command answers `--json`.
 */
export function print<T>(value: T, text: (value: T) => string | readonly string[] | undefined): void {
  if (json) {
    console.log(JSON.stringify(value));
    return;
  }
  const out = text(value);
  if (out === undefined || out.length === 0) return;
  console.log(typeof out === 'string' ? out : out.join('\n'));
}

/** A note for people (a hint, progress): on stderr, and left out with `--json`, so stdout stays data. */
export function note(text: string): void {
  if (!json) console.error(text);
}
