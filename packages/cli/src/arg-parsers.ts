import { parseDuration } from '@weft/core';
import { InvalidArgumentError } from 'commander';

/** A whole number of at least 1, for commander. */
export function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('must be a whole number of at least 1');
  return n;
}

/** A duration such as `90s` or `500ms`, at least 100 ms, in milliseconds, for commander. */
export function duration(value: string): number {
  const parsed = parseDuration(value);
  if (!parsed.ok) throw new InvalidArgumentError(parsed.error);
  if (parsed.value < 100) throw new InvalidArgumentError('must be at least 100ms');
  return parsed.value;
}

/** A TCP port, 0 to 65535, for commander. */
export function port(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535)
    throw new InvalidArgumentError('must be a port number (0 to 65535)');
  return n;
}

/** One of `choices`, for commander. */
export function oneOf(choices: readonly string[]): (value: string) => string {
  return (value) => {
    if (!choices.includes(value)) throw new InvalidArgumentError(`must be one of ${choices.join(', ')}`);
    return value;
  };
}
