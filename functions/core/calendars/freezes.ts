import type { Gate, GateFreeze } from '../config/index.ts';
import { parseLocalDateTime, zonedInstant } from '../config/zoned-time.ts';
import type { ClosedPeriod } from './closed-periods.ts';

/**
 * A gate's dated freezes as closed periods, their local times read in their time zones now (so a
 * time zone's rules are those of the running code, as for cron schedules). A freeze that cannot
 * be read (a spec edited by hand) closes the gate for good, and says why.
 */
export function freezePeriods(gate: Gate): ClosedPeriod[] {
  return (gate.freezes ?? []).map((freeze): ClosedPeriod => {
    try {
      return {
        start: instantOf(freeze.from, freeze.timeZone, 'earlier'),
        // An end in a repeated hour is its later occurrence: the freeze lasts until the wall clock last shows it.
        end: instantOf(freeze.to, freeze.timeZone, 'later'),
        cause: 'freeze',
        reason: describeFreeze(freeze),
      };
    } catch (error) {
      return {
        start: 0,
        end: Infinity,
        cause: 'freeze',
        reason: `${describeFreeze(freeze)} cannot be evaluated (${(error as Error).message}); the gate counts as closed until its spec is fixed`,
      };
    }
  });
}

/** `freeze "year end" (2026-12-24 to 2027-01-02, Europe/Berlin)` */
export function describeFreeze(freeze: GateFreeze): string {
  const why = freeze.reason ? ` ${JSON.stringify(freeze.reason)}` : '';
  return `freeze${why} (${freeze.from} to ${freeze.to}, ${freeze.timeZone})`;
}

function instantOf(local: string, timeZone: string, occurrence: 'earlier' | 'later'): number {
  const wall = parseLocalDateTime(local);
  if ('problem' in wall) throw new Error(wall.problem);
  return zonedInstant(wall, timeZone, occurrence);
}
