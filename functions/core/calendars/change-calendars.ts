import type { Gate } from '../config/index.ts';
import type { ClosedPeriod } from './closed-periods.ts';

/** An SSM Change Calendar's state at one instant, as `ssm:GetCalendarState` answers. */
export interface ChangeCalendarState {
  readonly state: 'OPEN' | 'CLOSED';
  /** When it next changes state (ISO 8601), if it says. */
  readonly nextTransitionAt?: string;
}

/** Reads one Change Calendar (a name or ARN) at `at` (`ssm:GetCalendarState` in AWS). */
export type ReadChangeCalendar = (calendar: string, at: Date) => Promise<ChangeCalendarState>;

/**
 * A gate's Change Calendars, read at `at`, as closed periods: a CLOSED one from `at` until its
 * next transition (unknown: for good); an OPEN one that says when it closes from then on (what
 * follows is not known). One that cannot be read, or no reader, closes the gate from `at` and
 * says why: it fails closed.
 */
export async function changeCalendarPeriods(
  gate: Gate,
  read: ReadChangeCalendar | undefined,
  at: Date,
): Promise<ClosedPeriod[]> {
  const calendars = gate.changeCalendars ?? [];
  const now = at.getTime();
  const periods = await Promise.all(
    calendars.map(async (calendar): Promise<ClosedPeriod | undefined> => {
      const named = `change calendar ${JSON.stringify(calendar)}`;
      let answer: ChangeCalendarState;
      try {
        if (!read) throw new Error('no Systems Manager client was given to read it');
        answer = await read(calendar, at);
      } catch (error) {
        return {
          start: now,
          end: Infinity,
          cause: 'change-calendar',
          reason: `${named} could not be read (${(error as Error).message}); the gate counts as closed until it can be`,
        };
      }
      const next = answer.nextTransitionAt === undefined ? Number.NaN : Date.parse(answer.nextTransitionAt);
      const transition = Number.isFinite(next) && next > now ? next : undefined;
      if (answer.state === 'CLOSED')
        return {
          start: now,
          end: transition ?? Infinity,
          cause: 'change-calendar',
          reason: `${named} is CLOSED`,
        };
      if (answer.state === 'OPEN')
        return transition === undefined
          ? undefined
          : { start: transition, end: Infinity, cause: 'change-calendar', reason: `${named} closes` };
      return {
        start: now,
        end: Infinity,
        cause: 'change-calendar',
        reason: `${named} answered the state ${JSON.stringify(answer.state)}, neither OPEN nor CLOSED; the gate counts as closed`,
      };
    }),
  );
  return periods.filter((period) => period !== undefined);
}
