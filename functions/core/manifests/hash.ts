import { createHash } from 'node:crypto';

/** sha256 of a JSON value with object keys sorted, so equal objects hash equally. */
export function stableHash(value: unknown): string {
  return createHash('sha256').update(stableStringify(value)).digest('hex');
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
 * compared the same way). Fields the server added (defaults, status) do not matter.
 */
export function isSubset(desired: unknown, live: unknown): boolean {
  if (Array.isArray(desired)) {
    return (
      Array.isArray(live) &&
      live.length === desired.length &&
      desired.every((item, i) => isSubset(item, live[i]))
    );
  }
  if (desired && typeof desired === 'object') {
    if (!live || typeof live !== 'object' || Array.isArray(live)) return false;
    return Object.entries(desired as Record<string, unknown>).every(([key, value]) =>
      value === null || value === undefined
        ? !(key in live) || (live as Record<string, unknown>)[key] == null
        : isSubset(value, (live as Record<string, unknown>)[key]),
    );
  }
  return desired === live;
}
