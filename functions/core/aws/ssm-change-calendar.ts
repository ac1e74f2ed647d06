import { GetCalendarStateCommand, type SSMClient } from '@aws-sdk/client-ssm';
import type { ReadChangeCalendar } from '../calendars/change-calendars.ts';

/** `ssm:GetCalendarState` of one Change Calendar (a name or ARN) at an instant. */
export function ssmChangeCalendarReader(ssm: SSMClient): ReadChangeCalendar {
  return async (calendar, at) => {
    const answer = await ssm.send(
      new GetCalendarStateCommand({ CalendarNames: [calendar], AtTime: at.toISOString() }),
    );
    return {
      state: answer.State as 'OPEN' | 'CLOSED',
      ...(answer.NextTransitionTime && { nextTransitionAt: answer.NextTransitionTime }),
    };
  };
}
