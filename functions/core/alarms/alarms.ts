// Alarm gates (`alarms`): a gate is closed while any CloudWatch alarm it names is in ALARM (or
// INSUFFICIENT_DATA, per `insufficientData`), or cannot be read. Read at evaluation, never stored,
// so a lost alarm event changes no decision; like a close, no open request lifts it.
import { alarmNameOf } from '../config/alarm-fields.ts';
import type { Gate } from '../config/index.ts';
import type { AlarmHold } from '../model/status.ts';

/** One CloudWatch alarm as DescribeAlarms reports it. */
export interface AlarmReading {
  readonly name: string;
  readonly arn: string;
  /** `OK`, `ALARM` or `INSUFFICIENT_DATA`. */
  readonly state: string;
  /** When it entered that state (ISO 8601), if reported. */
  readonly since?: string;
}

/** Reads CloudWatch alarms by name (DescribeAlarms in AWS: metric and composite alarms, one call). */
export interface AlarmStateReader {
  /** The alarms of those named that exist in the reader's account and region; missing ones are left out. */
  readAlarms(names: readonly string[]): Promise<readonly AlarmReading[]>;
}

/** The alarms of `gate` holding it closed now: in ALARM, INSUFFICIENT_DATA (unless `open`), missing or unreadable. */
export async function alarmsHolding(gate: Gate, reader: AlarmStateReader | undefined): Promise<AlarmHold[]> {
  const alarms = gate.alarms ?? [];
  if (alarms.length === 0) return [];
  const unreadable = (why: string): AlarmHold[] =>
    alarms.map((alarm) => ({ alarm, state: 'UNREADABLE', why: `could not be read: ${why}` }));
  if (!reader) return unreadable('no CloudWatch client is configured here');
  let readings: readonly AlarmReading[];
  try {
    readings = await reader.readAlarms([...new Set(alarms.map(alarmNameOf))]);
  } catch (error) {
    const { name, message } = error as Error;
    return unreadable(`${name && name !== 'Error' ? `${name}: ` : ''}${message}`);
  }
  return alarms.flatMap((alarm): AlarmHold[] => {
    const hold = holdOf(alarm, readings, gate);
    return hold ? [hold] : [];
  });
}

function holdOf(alarm: string, readings: readonly AlarmReading[], gate: Gate): AlarmHold | undefined {
  const name = alarmNameOf(alarm);
  const isArn = name !== alarm;
  const reading = readings.find((candidate) => (isArn ? candidate.arn === alarm : candidate.name === name));
  if (!reading) {
    const elsewhere = isArn && readings.find((candidate) => candidate.name === name);
    return {
      alarm,
      state: 'MISSING',
      why: elsewhere
        ? `does not exist: the alarm of that name here is ${elsewhere.arn} (an alarm of another account or region cannot be read)`
        : 'does not exist (or is not visible to sluice): the gate stays closed until it does',
    };
  }
  const since = reading.since ? ` since ${reading.since.replace(/\.\d{3}Z$/, 'Z')}` : '';
  if (reading.state === 'ALARM') return { alarm, state: 'ALARM', why: `in ALARM${since}` };
  if (reading.state === 'INSUFFICIENT_DATA' && gate.insufficientData !== 'open')
    return {
      alarm,
      state: 'INSUFFICIENT_DATA',
      why: `has no data yet (INSUFFICIENT_DATA${since}): the gate stays closed until the alarm reports OK (insufficientData: closed); if its metric has no data while healthy, give the alarm treatMissingData notBreaching, or the gate insufficientData: 'open'`,
    };
  if (reading.state === 'OK' || reading.state === 'INSUFFICIENT_DATA') return undefined;
  return { alarm, state: 'UNREADABLE', why: `could not be read: unknown state "${reading.state}"` };
}

/** `alarm 'checkout-errors' (in ALARM since …)`, joined. */
export function alarmHoldsText(holds: readonly AlarmHold[]): string {
  return holds.map((hold) => `alarm '${alarmNameOf(hold.alarm)}' ${hold.why}`).join(', ');
}
