import { describe, expect, it } from 'vitest';
import { cronProblem, parseCron } from '../../../functions/core/config/cron.ts';

/** The next `count` firings after `from`, as ISO strings. */
function firings(expression: string, timeZone: string, from: string, count = 3): string[] {
  const schedule = parseCron(expression, timeZone);
  const result: string[] = [];
  let cursor = new Date(from);
  for (let i = 0; i < count; i++) {
    const next = schedule.next(cursor);
    if (!next) break;
    result.push(next.toISOString());
    cursor = next;
  }
  return result;
}

describe('EventBridge cron: fields', () => {
  it('No-Deploy-Friday in Berlin fires at local midnight, before and after the March DST change', () => {
    expect(firings('0 0 ? * FRI *', 'Europe/Berlin', '2026-03-19T12:00:00Z')).toEqual([
      '2026-03-19T23:00:00.000Z', // Fri 20 March 00:00 CET (+01:00)
      '2026-03-26T23:00:00.000Z', // Fri 27 March 00:00 CET
      '2026-04-02T22:00:00.000Z', // Fri 3 April 00:00 CEST (+02:00)
    ]);
  });

  it('and across the October change back to CET', () => {
    expect(firings('0 0 ? * FRI *', 'Europe/Berlin', '2026-10-20T00:00:00Z')).toEqual([
      '2026-10-22T22:00:00.000Z', // Fri 23 October, CEST
      '2026-10-29T23:00:00.000Z', // Fri 30 October, CET
      '2026-11-05T23:00:00.000Z',
    ]);
  });

  it('accepts the cron(...) wrapper and numbers days of the week 1 (SUN) to 7 (SAT)', () => {
    expect(firings('cron(0 9 ? * 1 *)', 'UTC', '2026-11-18T00:00:00Z', 1)).toEqual([
      '2026-11-22T09:00:00.000Z',
    ]);
    expect(firings('0 9 ? * 7 *', 'UTC', '2026-11-18T00:00:00Z', 1)).toEqual(['2026-11-21T09:00:00.000Z']);
    expect(firings('0 9 ? * 6 *', 'UTC', '2026-11-18T00:00:00Z', 1)).toEqual(['2026-11-20T09:00:00.000Z']);
  });

  it('handles ranges, lists and steps, including a numeric start before the slash', () => {
    expect(firings('0 9-17/4 ? * MON-FRI *', 'UTC', '2026-11-20T10:00:00Z', 4)).toEqual([
      '2026-11-20T13:00:00.000Z',
      '2026-11-20T17:00:00.000Z',
      '2026-11-23T09:00:00.000Z',
      '2026-11-23T13:00:00.000Z',
    ]);
    expect(firings('0/20 8 1,15 * ? *', 'UTC', '2026-11-14T00:00:00Z', 4)).toEqual([
      '2026-11-15T08:00:00.000Z',
      '2026-11-15T08:20:00.000Z',
      '2026-11-15T08:40:00.000Z',
      '2026-12-01T08:00:00.000Z',
    ]);
    expect(firings('0 6 ? JAN,JUL MON *', 'UTC', '2026-06-30T00:00:00Z', 2)).toEqual([
      '2026-07-06T06:00:00.000Z',
      '2026-07-13T06:00:00.000Z',
    ]);
  });

  it('L in day-of-month is the last day, leap years included', () => {
    expect(firings('0 9 L * ? *', 'UTC', '2028-01-15T00:00:00Z')).toEqual([
      '2028-01-31T09:00:00.000Z',
      '2028-02-29T09:00:00.000Z',
      '2028-03-31T09:00:00.000Z',
    ]);
  });

  it('LW is the last weekday and 15W the weekday nearest the 15th, never crossing the month', () => {
    // January 2026 ends on a Saturday, May 2026 on a Sunday.
    expect(firings('0 9 LW * ? *', 'UTC', '2026-01-01T00:00:00Z', 1)).toEqual(['2026-01-30T09:00:00.000Z']);
    expect(firings('0 9 LW * ? *', 'UTC', '2026-05-01T00:00:00Z', 1)).toEqual(['2026-05-29T09:00:00.000Z']);
    // 15 February 2026 is a Sunday → Monday 16th; 15 August 2026 is a Saturday → Friday 14th.
    expect(firings('0 9 15W * ? *', 'UTC', '2026-02-01T00:00:00Z', 1)).toEqual(['2026-02-16T09:00:00.000Z']);
    expect(firings('0 9 15W * ? *', 'UTC', '2026-08-01T00:00:00Z', 1)).toEqual(['2026-08-14T09:00:00.000Z']);
    // 1 August 2026 is a Saturday: 1W is Monday the 3rd, not Friday 31 July.
    expect(firings('0 9 1W * ? *', 'UTC', '2026-07-15T00:00:00Z', 1)).toEqual(['2026-08-03T09:00:00.000Z']);
  });

  it('# is the nth weekday of the month and 6L the last Friday', () => {
    expect(firings('0 9 ? * 2#1 *', 'UTC', '2026-01-01T00:00:00Z', 2)).toEqual([
      '2026-01-05T09:00:00.000Z',
      '2026-02-02T09:00:00.000Z',
    ]);
    expect(firings('0 9 ? * TUE#3 *', 'UTC', '2026-11-01T00:00:00Z', 1)).toEqual([
      '2026-11-17T09:00:00.000Z',
    ]);
    expect(firings('0 9 ? * 6L *', 'UTC', '2026-01-01T00:00:00Z', 2)).toEqual([
      '2026-01-30T09:00:00.000Z',
      '2026-02-27T09:00:00.000Z',
    ]);
    expect(firings('0 9 ? * L *', 'UTC', '2026-11-18T00:00:00Z', 1)).toEqual(['2026-11-21T09:00:00.000Z']);
  });

  it('a year field ends the schedule', () => {
    expect(firings('0 9 1 1 ? 2027', 'UTC', '2026-06-01T00:00:00Z')).toEqual(['2027-01-01T09:00:00.000Z']);
  });

  it('is exclusive of the instant it starts from', () => {
    expect(firings('0 9 ? * * *', 'UTC', '2026-11-22T09:00:00Z', 1)).toEqual(['2026-11-23T09:00:00.000Z']);
  });
});

describe('EventBridge cron: daylight saving time, as Scheduler handles it', () => {
  it('skips a time that does not exist when clocks jump forward (Berlin, 29 March 2026)', () => {
    expect(firings('30 2 * * ? *', 'Europe/Berlin', '2026-03-27T12:00:00Z')).toEqual([
      '2026-03-28T01:30:00.000Z',
      '2026-03-30T00:30:00.000Z',
      '2026-03-31T00:30:00.000Z',
    ]);
  });

  it('skips it in New York too (8 March 2026)', () => {
    expect(firings('0 2 * * ? *', 'America/New_York', '2026-03-07T00:00:00Z', 2)).toEqual([
      '2026-03-07T07:00:00.000Z',
      '2026-03-09T06:00:00.000Z',
    ]);
  });

  it('fires once at a time that occurs twice when clocks go back (Berlin, 25 October 2026)', () => {
    expect(firings('30 2 * * ? *', 'Europe/Berlin', '2026-10-24T12:00:00Z', 2)).toEqual([
      '2026-10-25T00:30:00.000Z', // 02:30 CEST, the first pass
      '2026-10-26T01:30:00.000Z',
    ]);
  });

  it('a frequent schedule does not repeat the hour that occurs twice', () => {
    expect(firings('0/30 * * * ? *', 'Europe/Berlin', '2026-10-25T00:15:00Z', 3)).toEqual([
      '2026-10-25T00:30:00.000Z', // 02:30 CEST
      '2026-10-25T02:00:00.000Z', // 03:00 CET: 02:00 and 02:30 CET were already seen
      '2026-10-25T02:30:00.000Z',
    ]);
  });

  it('handles a half-hour DST shift (Lord Howe Island, 5 April 2026)', () => {
    // At 02:00 +11:00 clocks go back to 01:30 +10:30: 01:45 happens twice and fires once.
    expect(firings('45 1 * * ? *', 'Australia/Lord_Howe', '2026-04-04T12:00:00Z', 2)).toEqual([
      '2026-04-04T14:45:00.000Z',
      '2026-04-05T15:15:00.000Z',
    ]);
  });

  it('a zone without DST is a fixed offset (Asia/Kolkata)', () => {
    expect(firings('0 0 ? * FRI *', 'Asia/Kolkata', '2026-03-25T00:00:00Z', 2)).toEqual([
      '2026-03-26T18:30:00.000Z',
      '2026-04-02T18:30:00.000Z',
    ]);
  });
});

describe('EventBridge cron: errors name the problem', () => {
  it.each([
    ['0 0 * * FRI', /has 5 fields; an EventBridge cron expression has six/],
    ['0 0 ? * ? *', /cannot both be "\?"/],
    ['0 0 1 * FRI *', /one of day-of-month and day-of-week must be "\?"/],
    ['rate(5 minutes)', /only cron expressions are supported/],
    ['0 0 ? * FRI 1900', /year 1900 is outside 1970-2199/],
    ['0 25 ? * FRI *', /"0 25 \? \* FRI \*": .*hour/i],
    ['61 0 ? * FRI *', /minute/i],
    ['0 0 ? * FRI#9 *', /day-of-week field "FRI#9" is not valid/],
    ['0 0 ? 13 FRI *', /month/i],
    ['0 0 3W-5 * ? *', /day-of-month field "3W-5" is not valid/],
    ['0 0 ? * FRIDAY *', /"0 0 \? \* FRIDAY \*"/],
  ])('%s', (expression, message) => {
    expect(cronProblem(expression)).toMatch(message);
  });

  it('an unknown time zone', () => {
    expect(cronProblem('0 0 ? * FRI *', 'Europe/Atlantis')).toMatch(
      /"Europe\/Atlantis" is not an IANA time zone/,
    );
  });

  it('no problem for a valid expression', () => {
    expect(cronProblem('0 0 ? * FRI *', 'Europe/Berlin')).toBeUndefined();
  });
});
