import { randomFillSync } from 'node:crypto';

// Random bytes are drawn 4 KiB at a time: one call to the system's generator per 256 ids.
const pool = Buffer.alloc(4096);
let poolOffset = pool.length;

/**
 * A time-ordered UUID (version 7): 48 bits of milliseconds, then randomness. Runs listed by id come out
 * in start order, and new rows land at the right edge of their index.
 */
export function uuidv7(now = Date.now()): string {
  if (poolOffset + 16 > pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const bytes = Buffer.from(pool.subarray(poolOffset, poolOffset + 16));
  poolOffset += 16;
  bytes.writeUIntBE(now, 0, 6);
  bytes[6] = (bytes[6]! & 0x0f) | 0x70;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** True for a syntactically valid UUID. */
export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID.test(value);
}
