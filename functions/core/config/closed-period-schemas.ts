// What closes a gate for a span of time whatever its requests say: dated freezes, iCalendar
// calendars and SSM Change Calendars.
import * as z from 'zod';
import { timeZoneProblem } from './cron.ts';
import { DEFAULTS, MAX_WINDOW_MS } from './defaults.ts';
import { calendarProblem } from './icalendar.ts';
import {
  calendarUrlProblem,
  DEFAULT_CALENDAR_STALENESS_MS,
  MAX_CALENDAR_STALENESS_MS,
  MIN_CALENDAR_STALENESS_MS,
  s3BucketProblem,
  s3KeyProblem,
} from './calendar-sources.ts';
import { formatDuration } from './duration.ts';
import { checked, duration, name, strict } from './fields.ts';
import type { GateCalendar, GateFreeze } from './types.ts';
import { parseLocalDateTime, zonedInstant, type WallTime } from './zoned-time.ts';

/** The most dated freezes, calendars and change calendars one gate may have. */
export const MAX_FREEZES = 100;
export const MAX_CALENDARS = 4;
export const MAX_CHANGE_CALENDARS = 10;
const MAX_REASON_CHARS = 1_000;

/** An SSM document name (Change Calendars are SSM documents) or its ARN. */
const CHANGE_CALENDAR =
  /^(?:[a-zA-Z0-9_.-]{3,128}|arn:aws[\w-]*:ssm:[a-z]{2}(?:-[a-z]+)+-\d+:\d{12}:document\/[a-zA-Z0-9_.-]{3,128})$/;

const localDateTime = () =>
  checked((text) => {
    const parsed = parseLocalDateTime(text);
    return 'problem' in parsed ? parsed.problem : undefined;
  });

const freezeSchema = strict({
  from: localDateTime(),
  to: localDateTime(),
  timeZone: checked(timeZoneProblem).optional(),
  reason: z.string().max(MAX_REASON_CHARS, `must be at most ${MAX_REASON_CHARS} characters`).optional(),
})
  .superRefine((freeze, ctx) => {
    const timeZone = freeze.timeZone ?? DEFAULTS.timeZone;
    const walls = [freeze.from, freeze.to].map(parseLocalDateTime);
    if (timeZoneProblem(timeZone) || walls.some((wall) => 'problem' in wall)) return;
    const [from, to] = (walls as WallTime[]).map((wall, index) =>
      zonedInstant(wall, timeZone, index === 0 ? 'earlier' : 'later'),
    );
    if (!(to! > from!))
      ctx.addIssue({
        code: 'custom',
        path: ['to'],
        message: `must be after from (${freeze.from} ${timeZone}): a freeze runs from its start up to its end`,
      });
    else if (to! - from! > MAX_WINDOW_MS)
      ctx.addIssue({
        code: 'custom',
        path: ['to'],
        message: `is more than a year after from (${freeze.from}): a freeze that long is a mistake (use a gate closed by default)`,
      });
  })
  .transform((freeze): GateFreeze => ({
    from: freeze.from,
    to: freeze.to,
    timeZone: freeze.timeZone ?? DEFAULTS.timeZone,
    ...(freeze.reason !== undefined && { reason: freeze.reason }),
  }));

const calendarSchema = strict({
  name: name('calendar name').optional(),
  ics: z.string().optional(),
  file: z.string().optional(),
  s3: strict({ bucket: checked(s3BucketProblem), key: checked(s3KeyProblem) }).optional(),
  url: checked((url) => calendarUrlProblem(url)).optional(),
  maxStaleness: duration()
    .refine((ms) => ms >= MIN_CALENDAR_STALENESS_MS && ms <= MAX_CALENDAR_STALENESS_MS, {
      message: `must be between ${formatDuration(MIN_CALENDAR_STALENESS_MS)} and ${formatDuration(MAX_CALENDAR_STALENESS_MS)}`,
    })
    .optional(),
  timeZone: checked(timeZoneProblem).optional(),
})
  .superRefine((calendar, ctx) => {
    const given = (['ics', 'file', 's3', 'url'] as const).filter((field) => calendar[field] !== undefined);
    const live = calendar.s3 !== undefined || calendar.url !== undefined;
    if (live) {
      if (given.length > 1)
        ctx.addIssue({
          code: 'custom',
          path: [given[1]!],
          message: `give one of ics, file, s3 and url, not ${given.join(' and ')}`,
        });
      return;
    }
    if (calendar.maxStaleness !== undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['maxStaleness'],
        message: 'applies only to a calendar read live (s3 or url): an inline calendar is never stale',
      });
    if (calendar.ics === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: calendar.file === undefined ? [] : ['file'],
        message:
          calendar.file === undefined
            ? 'needs ics (the calendar text), file (read when the config file is loaded or the app is synthesized), s3 ({bucket, key}: read by the functions) or url (https://, on a host calendarHosts allows)'
            : `"${calendar.file}" was not read: a file is read by loadConfigFile and the construct; elsewhere give the calendar's text as ics`,
      });
      return;
    }
    const timeZone = calendar.timeZone ?? DEFAULTS.timeZone;
    if (timeZoneProblem(timeZone)) return;
    const problem = calendarProblem(calendar.ics, timeZone);
    if (problem)
      ctx.addIssue({
        code: 'custom',
        path: ['ics'],
        message: `calendar ${JSON.stringify(calendarName(calendar))} ${problem}`,
      });
  })
  .transform((calendar): GateCalendar => {
    const timeZone = calendar.timeZone ?? DEFAULTS.timeZone;
    const source = calendar.s3
      ? { s3: calendar.s3 }
      : calendar.url !== undefined
        ? { url: calendar.url }
        : undefined;
    if (source)
      return {
        name: calendarName(calendar),
        source,
        timeZone,
        maxStalenessMs: calendar.maxStaleness ?? DEFAULT_CALENDAR_STALENESS_MS,
      };
    return { name: calendarName(calendar), ics: calendar.ics!, timeZone };
  });

/** A calendar's name: its own, else its file's (object's, URL's) base name, else `calendar`. */
const calendarName = (calendar: {
  name?: string;
  file?: string;
  s3?: { key: string };
  url?: string;
}): string =>
  calendar.name ??
  ((calendar.file ?? calendar.s3?.key ?? urlPath(calendar.url))?.split(/[\\/]/).at(-1) || 'calendar');

const urlPath = (url: string | undefined): string | undefined => {
  if (url === undefined) return undefined;
  try {
    return new URL(url).pathname;
  } catch {
    return undefined;
  }
};

/** The fields a gate's schema adds for them. */
export const closedPeriodFields = {
  freezes: z.array(freezeSchema).max(MAX_FREEZES, `at most ${MAX_FREEZES} freezes`).optional(),
  calendars: z.array(calendarSchema).max(MAX_CALENDARS, `at most ${MAX_CALENDARS} calendars`).optional(),
  changeCalendars: z
    .array(
      checked((value) =>
        CHANGE_CALENDAR.test(value)
          ? undefined
          : `"${value}" is not a Change Calendar name (3-128 of letters, digits, _ . -) or arn:aws:ssm:<region>:<account>:document/<name>`,
      ),
    )
    .max(MAX_CHANGE_CALENDARS, `at most ${MAX_CHANGE_CALENDARS} change calendars`)
    .optional(),
};
