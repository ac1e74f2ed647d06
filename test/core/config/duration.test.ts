import { describe, expect, it } from 'vitest';
import { formatDuration, parseDuration } from '../../../functions/core/config/index.ts';

describe('parseDuration', () => {
  it.each([
    ['500ms', 500],
    ['30s', 30_000],
    ['5m', 300_000],
    ['24h', 86_400_000],
    ['7d', 604_800_000],
    ['1h30m', 5_400_000],
    ['1d2h3m4s5ms', 93_784_005],
    ['0s', 0],
    [' 5m ', 300_000],
  ])('%s → %d ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each([
    ['', 'an empty string is not a duration (use e.g. 30s, 5m, 24h, 7d)'],
    ['-5m', '"-5m" is not a duration: it must not be negative'],
    ['300', '"300" is not a duration: the number needs a unit (ms, s, m, h or d), e.g. 300s'],
    ['5w', '"5w" is not a duration: unknown unit "w" (use ms, s, m, h or d)'],
    ['5min', '"5min" is not a duration: unknown unit "min" (use ms, s, m, h or d)'],
    ['5M', '"5M" is not a duration: unknown unit "M" (use ms, s, m, h or d)'],
    ['5 minutes', '"5 minutes" is not a duration (use e.g. 30s, 5m, 24h, 7d)'],
    ['1.5h', '"1.5h" is not a duration (use e.g. 30s, 5m, 24h, 7d)'],
    ['h', '"h" is not a duration (use e.g. 30s, 5m, 24h, 7d)'],
    ['99999999999999999999d', '"99999999999999999999d" is too long to be a duration'],
  ])('rejects %j', (text, message) => {
    expect(() => parseDuration(text)).toThrow(new RangeError(message));
  });
});

describe('formatDuration', () => {
  it.each([
    [0, '0s'],
    [500, '500ms'],
    [30_000, '30s'],
    [300_000, '5m'],
    [5_400_000, '1h30m'],
    [86_400_000, '1d'],
    [93_784_005, '1d2h3m4s5ms'],
    [90_061_000, '1d1h1m1s'],
  ])('%d ms → %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
    expect(parseDuration(text)).toBe(ms);
  });

  it.each([-1, 1.5, Number.NaN, Infinity])('rejects %d', (ms) => {
    expect(() => formatDuration(ms)).toThrow(RangeError);
  });
});
