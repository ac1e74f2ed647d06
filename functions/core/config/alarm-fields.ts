// A gate's CloudWatch alarms: names or ARNs, each once.
import * as z from 'zod';
import { MAX_GATE_ALARMS } from './defaults.ts';
import { checked } from './fields.ts';

/** `arn:<partition>:cloudwatch:<region>:<account>:alarm:<name>` */
export const ALARM_ARN = /^arn:aws[\w-]*:cloudwatch:[a-z]{2}(?:-[a-z]+)+-\d+:\d{12}:alarm:(.+)$/s;

/** Why `alarm` is neither a CloudWatch alarm name (1–255 characters, no control characters) nor an alarm ARN. */
export function alarmProblem(alarm: string): string | undefined {
  if (alarm.startsWith('arn:') && !ALARM_ARN.test(alarm))
    return `"${alarm}" is not a CloudWatch alarm ARN (arn:aws:cloudwatch:<region>:<account>:alarm:<name>)`;
  const name = ALARM_ARN.exec(alarm)?.[1] ?? alarm;
  if (name.length > 255) return 'is not a CloudWatch alarm name: at most 255 characters';
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(name))
    return 'is not a CloudWatch alarm name: it holds a control character';
  if (name.trim() !== name) return `"${name}" is not a CloudWatch alarm name: it starts or ends with a space`;
  return undefined;
}

/** The alarm's name: the last part of its ARN, or the name as written. */
export const alarmNameOf = (alarm: string): string => ALARM_ARN.exec(alarm)?.[1] ?? alarm;

export const alarmsSchema = z
  .array(checked(alarmProblem))
  .min(1, 'must name at least one alarm (or leave alarms out)')
  .max(MAX_GATE_ALARMS, `must name at most ${MAX_GATE_ALARMS} alarms`)
  .superRefine(
    (alarms, ctx) => {
      alarms.forEach((alarm, index) => {
        if (alarms.findIndex((other) => alarmNameOf(other) === alarmNameOf(alarm)) !== index)
          ctx.addIssue({
            code: 'custom',
            message: `alarm "${alarmNameOf(alarm)}" is listed twice`,
            path: [index],
          });
      });
    },
    { when: (payload) => Array.isArray(payload.value) },
  );
