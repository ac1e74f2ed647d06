/** Durations as written in config and events (`30s`, `5m`, `24h`, `7d`, `1h30m`, `500ms`), in milliseconds. */

const UNIT_MS = { d: 86_400_000, h: 3_600_000, m: 60_000, s: 1_000, ms: 1 } as const;
type Unit = keyof typeof UNIT_MS;

export const DURATION_HINT = 'use e.g. 30s, 5m, 24h, 7d';

const WELL_FORMED = /^(?:\d+(?:ms|d|h|m|s))+$/;
const PART = /(\d+)(ms|d|h|m|s)/g;

/** Parses a duration into milliseconds; throws a RangeError naming the value when it is not one. */
export function parseDuration(value: string): number {
  const problem = durationProblem(value);
  if (problem) throw new RangeError(problem);
  let total = 0;
  for (const [, amount, unit] of value.trim().matchAll(PART)) total += Number(amount) * UNIT_MS[unit as Unit];
  if (!Number.isSafeInteger(total)) throw new RangeError(`"${value}" is too long to be a duration`);
  return total;
}

function durationProblem(value: string): string | undefined {
  if (typeof value !== 'string') return `${String(value)} is not a duration (${DURATION_HINT})`;
  const text = value.trim();
  const quoted = JSON.stringify(value);
  if (text === '') return `an empty string is not a duration (${DURATION_HINT})`;
  if (WELL_FORMED.test(text)) return undefined;
  if (/^-\d/.test(text)) return `${quoted} is not a duration: it must not be negative`;
  if (/^\d+(?:\.\d+)?$/.test(text))
    return `${quoted} is not a duration: the number needs a unit (ms, s, m, h or d), e.g. ${text}s`;
  const parts = /^(?:\d+[a-zA-Zµ]+)+$/.test(text) ? [...text.matchAll(/\d+([a-zA-Zµ]+)/g)] : [];
  const unknown = parts.map((p) => p[1]).find((unit) => !(unit! in UNIT_MS));
  if (unknown) return `${quoted} is not a duration: unknown unit "${unknown}" (use ms, s, m, h or d)`;
  return `${quoted} is not a duration (${DURATION_HINT})`;
}

/** The shortest form of a duration, e.g. 5400000 → `1h30m`, 0 → `0s`. */
export function formatDuration(ms: number): string {
  if (!Number.isSafeInteger(ms) || ms < 0) {
    throw new RangeError(`${ms} is not a duration in milliseconds (a whole number, 0 or more)`);
  }
  if (ms === 0) return '0s';
  let rest = ms;
  let out = '';
  for (const unit of ['d', 'h', 'm', 's', 'ms'] as const) {
    const amount = Math.floor(rest / UNIT_MS[unit]);
    if (amount > 0) out += `${amount}${unit}`;
    rest -= amount * UNIT_MS[unit];
  }
  return out;
}
