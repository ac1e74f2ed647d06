import { createHash, createHmac } from 'node:crypto';
import { sameQuantity } from './quantity.ts';

/** sha256 of a JSON value with object keys sorted, so equal objects hash equally. */
export function stableHash(value: unknown): string {
  return createHash('sha256').update(stableStringify(value)).digest('hex');
}

/** HMAC-SHA256 of a JSON value with object keys sorted: stableHash for objects with secret values. */
export function keyedStableHash(value: unknown, key: Buffer): string {
  return createHmac('sha256', key).update(stableStringify(value)).digest('hex');
}

function stableStringify(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableStringify).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableStringify(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * Whether every field set in `desired` has the same value in `live` (lists: same length, items
 * compared the same way). Fields the server added (defaults, status) do not matter, nor do its
 * canonical spellings: a quantity written `0.5` and stored as `500m` is the same, and an empty or
 * zero value the server leaves out (`annotations: {}`, `hostNetwork: false`) is not missing.
 */
export function isSubset(desired: unknown, live: unknown): boolean {
  if (live === undefined || live === null) return isEmptyValue(desired);
  if (Array.isArray(desired)) {
    return (
      Array.isArray(live) &&
      live.length === desired.length &&
      desired.every((item, i) => isSubset(item, live[i]))
    );
  }
  if (desired && typeof desired === 'object') {
    if (typeof live !== 'object' || Array.isArray(live)) return false;
    return Object.entries(desired as Record<string, unknown>).every(([key, value]) =>
      value === null || value === undefined
        ? !(key in live) || (live as Record<string, unknown>)[key] == null
        : isSubset(value, (live as Record<string, unknown>)[key]),
    );
  }
  if (desired === live) return true;
  return (
    typeof live === 'string' &&
    (typeof desired === 'number' || typeof desired === 'string') &&
    sameQuantity(desired, live)
  );
}

/** Values Go's `omitempty` drops: the server stores them as absent. */
function isEmptyValue(value: unknown): boolean {
  if (value === false || value === 0 || value === '') return true;
  if (Array.isArray(value)) return value.length === 0;
  return typeof value === 'object' && value !== null && Object.keys(value).length === 0;
}

/**
 * An object as the API server stores it, where the stored form differs from what was written in a
 * way `isSubset` cannot see: a Secret's `stringData` is stored base64-encoded in `data`.
 */
export function storedForm<T extends { kind?: string; apiVersion?: string }>(object: T): T {
  const secret = object as T & { stringData?: Record<string, unknown>; data?: Record<string, unknown> };
  if (object.kind !== 'Secret' || object.apiVersion !== 'v1' || !secret.stringData) return object;
  const { stringData, ...rest } = secret;
  const encoded = Object.fromEntries(
    Object.entries(stringData).map(([key, value]) => [key, Buffer.from(String(value)).toString('base64')]),
  );
  return { ...rest, data: { ...rest.data, ...encoded } } as T;
}
