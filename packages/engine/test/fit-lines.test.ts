import { fitLines, truncationMarker } from '@weft/engine';
import { describe, expect, it } from 'vitest';

const LIMITS = { lineBytes: 64, linesPerAttempt: 3, bytesPerAttempt: 100 };
const empty = { lines: 0, bytes: 0, truncated: false };
const line = (message: string, fields?: Record<string, number>) => ({
  level: 'info' as const,
  message,
  ...(fields ? { fields } : {}),
});

describe('fitLines: the bounds of an attempt log', () => {
  it('keeps lines while they fit, then writes one marker and drops the rest', () => {
    const fitted = fitLines(empty, [line('a'), line('b'), line('c'), line('d'), line('e')], LIMITS);
    expect(fitted.rows.map((r) => r.message)).toEqual(['a', 'b', 'c', truncationMarker(LIMITS)]);
    expect(fitted).toMatchObject({ usage: { lines: 3, bytes: 3, truncated: true }, dropped: 2 });
    // Once truncated, nothing more is kept, and no second marker is written.
    expect(fitLines(fitted.usage, [line('f')], LIMITS)).toEqual({
      rows: [],
      usage: fitted.usage,
      dropped: 1,
    });
  });

  it('counts bytes, not characters, and truncates on the byte bound too', () => {
    const fitted = fitLines({ lines: 0, bytes: 90, truncated: false }, [line('ééééé'), line('x')], LIMITS);
    // 'ééééé' is 10 bytes: 100 in all, still within the bound; then 'x' passes it.
    expect(fitted.rows.map((r) => r.message)).toEqual(['ééééé', truncationMarker(LIMITS)]);
    expect(fitted.usage).toEqual({ lines: 1, bytes: 100, truncated: true });
  });

  it('cuts a long message on a character boundary and says how much was cut; large fields are dropped', () => {
    const [cut] = fitLines(empty, [line('é'.repeat(100))], LIMITS).rows;
    expect(Buffer.byteLength(cut!.message)).toBeLessThanOrEqual(64);
    expect(cut!.message).toMatch(/^é+ … \[\d+ bytes cut\]$/);
    const [big] = fitLines(empty, [line('m', { a: 1, b: 2, c: 3, d: 4, e: 5, f: 6, g: 7 })], LIMITS).rows;
    expect(big).toMatchObject({
      fields: null,
      message: expect.stringMatching(/^m \[fields of \d+ bytes dropped\]$/),
    });
    const [small] = fitLines(empty, [line('m', { a: 1 })], LIMITS).rows;
    expect(small).toMatchObject({
      fields: { a: 1 },
      message: 'm',
      bytes: 1 + JSON.stringify({ a: 1 }).length,
    });
  });
});
