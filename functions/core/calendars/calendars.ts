import type { Gate, GateCalendar } from '../config/index.ts';
import type { CalendarOccurrence } from '../config/icalendar.ts';
import type { ClosedPeriod } from './closed-periods.ts';

/** How far before and after `at` calendar events are expanded: as far as next changes are looked for. */
export const CALENDAR_SPAN_MS = 400 * 24 * 3_600_000;

/**
 * A gate's calendar events around `at` (CALENDAR_SPAN_MS either side) as closed periods. The
 * iCalendar library is loaded on first use, only for a gate that has calendars. A calendar that
 * cannot be expanded (a spec edited by hand) closes the gate for good, and says why.
 */
export async function calendarPeriods(gate: Gate, at: Date): Promise<ClosedPeriod[]> {
  const calendars = gate.calendars ?? [];
  if (calendars.length === 0) return [];
  const { calendarOccurrences } = await import('../config/icalendar.ts');
  const from = at.getTime() - CALENDAR_SPAN_MS;
  const to = at.getTime() + CALENDAR_SPAN_MS;
  return calendars.flatMap((calendar): ClosedPeriod[] => {
    let occurrences: CalendarOccurrence[];
    try {
      occurrences = calendarOccurrences(calendar.ics, calendar.timeZone, from, to);
    } catch (error) {
      return [
        {
          start: 0,
          end: Infinity,
          cause: 'calendar',
          reason: `calendar ${JSON.stringify(calendar.name)} cannot be evaluated (${(error as Error).message}); the gate counts as closed until its spec is fixed`,
        },
      ];
    }
    return occurrences.map((occurrence) => ({
      start: occurrence.start,
      end: occurrence.end,
      cause: 'calendar',
      reason: describeOccurrence(calendar, occurrence),
    }));
  });
}

/** `calendar "holidays": event "Christmas" (2026-12-25T00:00:00.000Z to 2026-12-26T00:00:00.000Z)` */
function describeOccurrence(calendar: GateCalendar, occurrence: CalendarOccurrence): string {
  const event = occurrence.summary ? `event ${JSON.stringify(occurrence.summary.slice(0, 200))}` : 'an event';
  return `calendar ${JSON.stringify(calendar.name)}: ${event} (${new Date(occurrence.start).toISOString()} to ${new Date(occurrence.end).toISOString()})`;
}
