// Where a live calendar is read from, as the config names it: an S3 object (`s3: {bucket, key}`)
// or an HTTPS URL (`url`, only on a host the config's `calendarHosts` allows). The checks here run
// at parse (config file, construct props) and again in the functions before any read.
import type { CalendarSource } from './types.ts';

/** S3's bucket naming rules (general purpose buckets): 3-63 of a-z 0-9 . -, starting and ending with a letter or digit. */
const S3_BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
/** S3 object keys are at most 1,024 bytes of UTF-8. */
const MAX_S3_KEY_BYTES = 1024;
/** A host name as an allow-list names it: lower-case DNS labels (no IP literal: those are refused). */
const HOST_NAME =
  /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;
/** A dotted IPv4 address (IPv6 literals are refused by HOST_NAME already). */
const IPV4 = /^\d+\.\d+\.\d+\.\d+$/;
/** The default staleness of a live calendar's last good copy. */
export const DEFAULT_CALENDAR_STALENESS_MS = 24 * 3_600_000;
/** The most a live calendar's staleness may be set to: a week (a copy older is no longer the calendar). */
export const MAX_CALENDAR_STALENESS_MS = 7 * 24 * 3_600_000;
/** The least: a minute. */
export const MIN_CALENDAR_STALENESS_MS = 60_000;

/** The problem with an S3 bucket name, or undefined. */
export function s3BucketProblem(bucket: string): string | undefined {
  if (!S3_BUCKET.test(bucket) || bucket.includes('..') || /^\d+\.\d+\.\d+\.\d+$/.test(bucket))
    return `"${bucket}" is not an S3 bucket name (3-63 of a-z, 0-9, . and -, starting and ending with a letter or digit)`;
  return undefined;
}

/** The problem with an S3 object key, or undefined. */
export function s3KeyProblem(key: string): string | undefined {
  if (Buffer.byteLength(key, 'utf8') > MAX_S3_KEY_BYTES)
    return `is longer than ${MAX_S3_KEY_BYTES} bytes, the longest S3 object key`;
  if ([...key].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f))
    return 'holds a control character';
  if (/[*?$]/.test(key))
    return `"${key}" holds * ? or $, which an IAM policy reads as a wildcard or a variable: the stack's grant would reach other objects; rename the object`;
  return undefined;
}

/** The problem with a host of `calendarHosts`, or undefined. */
export function calendarHostProblem(host: string): string | undefined {
  return HOST_NAME.test(host) && !IPV4.test(host)
    ? undefined
    : `"${host}" is not a host name (lower-case DNS labels, e.g. calendar.example.com; IP addresses are not allowed)`;
}

/**
 * The problem with a live calendar's URL, or undefined: it must be `https://` on a host name
 * `allowedHosts` lists (exactly, lower case; not checked when not given), without credentials or a
 * fragment.
 */
export function calendarUrlProblem(url: string, allowedHosts?: readonly string[]): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return `"${url}" is not a URL`;
  }
  if (parsed.protocol !== 'https:')
    return `"${url}" is not https://: a calendar is read over HTTPS only (or give it as an S3 object)`;
  if (parsed.username || parsed.password)
    return `"${url}" carries credentials: they would be stored in the gate's spec; serve the calendar without them, or from S3`;
  if (parsed.hash) return `"${url}" has a fragment (#…), which is never sent: remove it`;
  const host = parsed.hostname;
  if (calendarHostProblem(host)) return `"${url}": ${calendarHostProblem(host)}`;
  if (allowedHosts && !allowedHosts.includes(host))
    return allowedHosts.length === 0
      ? `"${url}": no host is allowed for calendars: add "${host}" to calendarHosts to allow it`
      : `"${url}": host "${host}" is not in calendarHosts (${allowedHosts.join(', ')})`;
  return undefined;
}

/** `s3://bucket/key` or the URL: how messages and `sluice gates` name the source. */
export function describeCalendarSource(source: CalendarSource): string {
  return 's3' in source ? `s3://${source.s3.bucket}/${source.s3.key}` : source.url;
}
