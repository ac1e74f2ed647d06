import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { MAX_CALENDAR_CHARS } from './icalendar.ts';
import { ConfigError, formatPath, isRecord } from './issues.ts';

/**
 * `gates` with each calendar's `file` read into its `ics` (a path relative to `baseDir`), so
 * that the schema checks the text and the spec stores it. A file that cannot be read is a
 * ConfigError naming the calendar's field.
 */
export function readCalendarFiles(gates: unknown, baseDir: string, origin: string): unknown {
  if (!Array.isArray(gates)) return gates;
  return gates.map((gate: unknown, gateIndex) => {
    if (!isRecord(gate) || !Array.isArray(gate.calendars)) return gate;
    const calendars = gate.calendars.map((calendar: unknown, index) => {
      if (!isRecord(calendar) || typeof calendar.file !== 'string' || calendar.ics !== undefined)
        return calendar;
      const path = resolve(baseDir, calendar.file);
      try {
        const text = readFileSync(path, 'utf8');
        // Longer text is refused by the schema; reading it all is bounded here.
        return {
          ...calendar,
          ics: text.length > MAX_CALENDAR_CHARS + 1 ? text.slice(0, MAX_CALENDAR_CHARS + 1) : text,
        };
      } catch (error) {
        throw new ConfigError(origin, [
          {
            path: formatPath([gateIndex, 'calendars', index, 'file'], gates).replace(/^/, 'gates'),
            message: `cannot read ${path}: ${(error as Error).message}`,
          },
        ]);
      }
    });
    return { ...gate, calendars };
  });
}
