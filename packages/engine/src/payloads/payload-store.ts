import { createHash } from 'node:crypto';
import { type Json, WeftError } from '@weft/core';
import type { BlobStore } from './blob-store.js';

/** The field that marks a stored value as a reference to a blob. A user value may not use it. */
export const BLOB_REF = '$weft_blob';

/** How payloads are kept. */
export interface PayloadConfig {
  /** Values larger than this (as JSON text) go to the blob store. Default 256 KB. */
  readonly thresholdBytes: number;
  /** Values larger than this are refused. Default 16 MB. */
  readonly maxBytes: number;
}

/** Defaults: offload above 256 KB, refuse above 16 MB. */
export const DEFAULT_PAYLOADS: PayloadConfig = { thresholdBytes: 256 * 1024, maxBytes: 16 * 1024 * 1024 };

/** A reference to an offloaded value, as stored in its place. */
export interface BlobRef {
  readonly [BLOB_REF]: string;
  readonly bytes: number;
}

/**
 * Large payloads. A run input, task input or output, human answer or history event over the threshold is
 * stored in the blob store and replaced in PostgreSQL by a small reference; the engine resolves references
 * before anything reads the value (the decider and its expressions, workers, the API), so nothing above
 * the store sees one. Values over the hard limit are refused with an error that says so.
 *
 * Checking a value's size costs a bounded walk that stops at the threshold, so small values (nearly all)
 * never get serialised twice. Recently written and read blobs are kept in memory, up to a byte budget.
 */
export class PayloadStore {
  private readonly cache = new Map<string, { value: Json; bytes: number }>();
  private cachedBytes = 0;

  constructor(
    readonly blobs: BlobStore,
    readonly config: PayloadConfig = DEFAULT_PAYLOADS,
    private readonly cacheBytes = 64 * 1024 * 1024,
  ) {}

  /** True for a stored reference. */
  isRef(value: unknown): value is BlobRef {
    return (
      typeof value === 'object' &&
      value !== null &&
      !Array.isArray(value) &&
      typeof (value as Record<string, unknown>)[BLOB_REF] === 'string'
    );
  }

  /**
   * The value to store: the value itself when small, else a reference to a blob written now. Throws
   * `payload_too_large` (413) past the hard limit, naming `what` (`the run input`, `the output of task x`).
   */
  async offload(value: Json, what: string, options: { readonly enforceMax?: boolean } = {}): Promise<Json> {
    if (value === null || typeof value !== 'object') {
      if (typeof value !== 'string' || value.length * 3 < this.config.thresholdBytes) return value;
    }
    if (this.isRef(value)) {
      // The engine's own values may carry a reference already (a signal's offloaded data, delivered as an
      // output); a value from outside may not use the field.
      if (options.enforceMax === false) return value;
      throw new WeftError('bad_payload', `${what} uses the reserved field "${BLOB_REF}"`, 400);
    }
    if (!exceeds(value, this.config.thresholdBytes)) return value;
    const text = JSON.stringify(value);
    const bytes = Buffer.byteLength(text);
    if (options.enforceMax ?? true) this.checkSize(bytes, what);
    if (bytes <= this.config.thresholdBytes) return value;
    const key = createHash('sha256').update(text).digest('base64url');
    await this.blobs.put(key, Buffer.from(text));
    this.remember(key, value, bytes);
    return { [BLOB_REF]: key, bytes };
  }

  /**
   * Makes sure the blob `key` (the offloaded `value`) is in the blob store, putting it back when a deleter
   * removed it (invariant 30): with the store's `has`, only when missing; without, by putting it again.
   */
  async ensureStored(key: string, value: Json): Promise<void> {
    if (this.blobs.has && (await this.blobs.has(key))) return;
    await this.blobs.put(key, Buffer.from(JSON.stringify(value)));
  }

  /** Throws `payload_too_large` when `bytes` is over the hard limit. */
  checkSize(bytes: number, what: string): void {
    if (bytes <= this.config.maxBytes) return;
    throw new WeftError(
      'payload_too_large',
      `${what} is ${mb(bytes)}; the most Weft accepts is ${mb(this.config.maxBytes)} (the server's --max-payload)`,
      413,
      { bytes, max_bytes: this.config.maxBytes },
    );
  }

  /** The value a stored value stands for: itself, or the blob it references. */
  async resolve<T extends Json | null | undefined>(value: T): Promise<T | Json> {
    if (!this.isRef(value)) return value;
    const key = value[BLOB_REF];
    const hit = this.cache.get(key);
    if (hit !== undefined) return hit.value;
    const data = await this.blobs.get(key);
    if (!data) throw new Error(`payload blob ${key} is missing from the blob store (${this.blobs.name})`);
    const parsed = JSON.parse(data.toString('utf8')) as Json;
    this.remember(key, parsed, data.length);
    return parsed;
  }

  /**
   * A copy of `record` with every reference in the named fields resolved, however deep (a history event
   * or a signal carries the reference of an offloaded value inside its data). For readers such as the API;
   * the record itself when there is none.
   */
  async resolveFields<T extends object>(record: T, fields: readonly (keyof T)[]): Promise<T> {
    if (!fields.some((f) => this.containsRef(record[f] as unknown as Json))) return record;
    const out = { ...record };
    for (const f of fields) out[f] = (await this.resolveDeep(record[f] as unknown as Json)) as T[keyof T];
    return out;
  }

  /** The value with every reference in it, at any depth, resolved. */
  async resolveDeep(value: Json): Promise<Json> {
    if (this.isRef(value)) return this.resolve(value);
    if (value === null || typeof value !== 'object') return value;
    if (Array.isArray(value)) return Promise.all(value.map((v) => this.resolveDeep(v)));
    const out: { [key: string]: Json } = {};
    for (const [k, v] of Object.entries(value)) out[k] = await this.resolveDeep(v);
    return out;
  }

  private containsRef(value: Json | undefined): boolean {
    if (value === null || value === undefined || typeof value !== 'object') return false;
    if (this.isRef(value)) return true;
    if (Array.isArray(value)) return value.some((v) => this.containsRef(v));
    for (const key in value) if (this.containsRef(value[key])) return true;
    return false;
  }

  private remember(key: string, value: Json, bytes: number): void {
    if (bytes > this.cacheBytes / 4 || this.cache.has(key)) return;
    this.cache.set(key, { value, bytes });
    this.cachedBytes += bytes;
    // Oldest first out.
    for (const [oldest, entry] of this.cache) {
      if (this.cachedBytes <= this.cacheBytes) break;
      this.cache.delete(oldest);
      this.cachedBytes -= entry.bytes;
    }
  }
}

/**
 * True when the value's JSON text is longer than `limit` characters, found by a walk that stops as soon as
 * it knows (it over-counts a little, never under-counts, for anything but exotic escapes).
 */
export function exceeds(value: Json, limit: number): boolean {
  let left = limit;
  const walk = (v: Json): boolean => {
    if (v === null || typeof v === 'boolean') left -= 5;
    else if (typeof v === 'number') left -= 24;
    else if (typeof v === 'string') left -= v.length * 2 + 2;
    else if (Array.isArray(v)) {
      left -= 2;
      for (const item of v) {
        left -= 1;
        if (left < 0 || walk(item)) return true;
      }
    } else {
      left -= 2;
      for (const key in v) {
        left -= key.length + 4;
        if (left < 0 || walk(v[key] as Json)) return true;
      }
    }
    return left < 0;
  };
  return walk(value);
}

function mb(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${(bytes / 1024 / 1024).toFixed(1)} MB` : `${Math.ceil(bytes / 1024)} KB`;
}
