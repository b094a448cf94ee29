import { err, ok, type Result } from './result.js';

const UNIT_MS: Record<string, number> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

const PART = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/y;

/**
 * Parses a duration such as `250ms`, `30s`, `5m`, `1h30m` or `2d` into milliseconds.
 * A bare number is refused: the unit must be explicit so `30` is never read as 30 ms by accident.
 */
export function parseDuration(text: string): Result<number, string> {
  const source = text.trim();
  if (source === '') return err('a duration cannot be empty; write it like 30s, 5m or 1h30m');
  let total = 0;
  PART.lastIndex = 0;
  let consumed = 0;
  while (consumed < source.length) {
    PART.lastIndex = consumed;
    const match = PART.exec(source);
    if (!match) {
      return err(`"${text}" is not a duration; write it like 250ms, 30s, 5m, 1h30m or 2d`);
    }
    total += Number(match[1]) * (UNIT_MS[match[2]!] ?? 0);
    consumed = PART.lastIndex;
  }
  if (!Number.isFinite(total)) return err(`"${text}" is too large a duration`);
  return ok(Math.round(total));
}

/** Formats milliseconds for people: `1.2s`, `3m4s`, `2h`, `850ms`. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)}s`;
  const units: [string, number][] = [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
  ];
  let rest = Math.round(ms / 1000) * 1000;
  let out = '';
  for (const [unit, size] of units) {
    if (rest >= size) {
      out += `${Math.floor(rest / size)}${unit}`;
      rest %= size;
    }
  }
  return out;
}
