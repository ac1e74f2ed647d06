// Schedules naming a local time that clocks skip when they go forward: EventBridge Scheduler does
// not fire them then, and the computed state does not count them. Warned about at synth and in
// `sluice gates`, as the schedule stays valid.
import { skippedTimes } from './cron.ts';
import type { Gate } from './types.ts';

/** How far ahead skipped times are looked for: two years see every yearly rule of a zone. */
export const SKIPPED_TIMES_HORIZON_MS = 2 * 366 * 24 * 3_600_000;

/** One warning per schedule of `gate` that names a skipped local time within the horizon from `from`. */
export function skippedScheduleWarnings(gate: Gate, from: Date): string[] {
  const to = new Date(from.getTime() + SKIPPED_TIMES_HORIZON_MS);
  return gate.schedules.flatMap((schedule, index) => {
    const skipped = skippedTimes(schedule.cron, schedule.timeZone, from, to);
    if (skipped.length === 0) return [];
    return [
      `gate '${gate.name}' schedules[${index}] "${schedule.cron}" (${schedule.timeZone}) fires at local times clocks skip when they go forward (${skipped.join(', ')}): EventBridge Scheduler does not fire it then, so it does not ${schedule.action} the gate on those days; choose a time outside the skipped hour or a zone without the change (UTC)`,
    ];
  });
}
