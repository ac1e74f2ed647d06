// One gate: its default, window, approvals and cron schedules, normalised to the Gate type.
import * as z from 'zod';
import { closedPeriodFields } from './closed-period-schemas.ts';
import { cronProblem, timeZoneProblem, unwrapCron } from './cron.ts';
import { alarmsSchema } from './alarm-fields.ts';
import { DEFAULTS, MAX_APPROVERS, MAX_OVERRIDE_LIMIT_MS, MAX_WINDOW_MS } from './defaults.ts';
import { formatDuration } from './duration.ts';
import { holidaySetSchema } from './holiday-sets.ts';
import type { Gate, GateSchedule } from './types.ts';
import { checked, duration, name, strict } from './fields.ts';

const scheduleSchema = strict({
  cron: checked((expression) => cronProblem(expression)).transform(unwrapCron),
  timeZone: checked(timeZoneProblem).optional(),
  action: z.enum(['open', 'close']),
  window: gateWindow().optional(),
}).transform((schedule): GateSchedule => ({
  cron: schedule.cron,
  timeZone: schedule.timeZone ?? DEFAULTS.timeZone,
  action: schedule.action,
  ...(schedule.window !== undefined && { windowMs: schedule.window }),
}));

export const gateSchema = strict({
  name: name('gate name'),
  default: z.enum(['open', 'closed']),
  window: gateWindow().optional(),
  description: z.string().optional(),
  schedules: z.array(scheduleSchema).optional(),
  approval: z.enum(['any', 'revision']).optional(),
  approvers: z
    .number()
    .int('must be a whole number')
    .min(1, 'must be at least 1')
    .max(MAX_APPROVERS, `must be at most ${MAX_APPROVERS}`)
    .optional(),
  sessionNamedRoles: z
    .array(
      z
        .string()
        .regex(
          /^arn:aws[\w-]*:iam::\d{12}:role\/(?:[\w+=,.@-]+\/)*[\w+=,.@-]{1,64}$/,
          'must be a role ARN (arn:aws:iam::<account>:role/<name>): a bare name would match a role of that name in any account',
        ),
    )
    .optional(),
  requireVerified: z.boolean().optional(),
  preventSelfApproval: z.boolean().optional(),
  ...closedPeriodFields,
  holidays: holidaySetSchema.optional(),
  alarms: alarmsSchema.optional(),
  insufficientData: z.enum(['open', 'closed']).optional(),
  maxOverride: duration()
    .refine((ms) => ms <= MAX_OVERRIDE_LIMIT_MS, {
      message: `must be at most ${formatDuration(MAX_OVERRIDE_LIMIT_MS)}: a longer override is not break-glass (change the gate instead)`,
    })
    .optional(),
})
  .superRefine((gate, ctx) => {
    if (gate.insufficientData !== undefined && !gate.alarms?.length)
      ctx.addIssue({
        code: 'custom',
        path: ['insufficientData'],
        message: 'applies only to a gate with alarms: name the CloudWatch alarms in `alarms`, or remove it',
      });
    if (gate.preventSelfApproval && gate.approval !== 'revision')
      ctx.addIssue({
        code: 'custom',
        path: ['preventSelfApproval'],
        message:
          "needs approval: 'revision': an open request that names no revision lets through whatever was pushed, the approver's own pushes included",
      });
    const rule =
      gate.approval === 'revision'
        ? 'approval: revision'
        : (gate.approvers ?? 1) > 1
          ? `approvers: ${gate.approvers}`
          : undefined;
    if (!rule) return;
    if (gate.default === 'open')
      ctx.addIssue({
        code: 'custom',
        path: ['default'],
        message: `a gate with ${rule} must be closed by default: open by default, it would let everything through unapproved`,
      });
    gate.schedules?.forEach((schedule, index) => {
      if (schedule.action === 'open')
        ctx.addIssue({
          code: 'custom',
          path: ['schedules', index, 'action'],
          message: `a gate with ${rule} cannot have open schedules: a schedule approves nothing`,
        });
    });
  })
  .transform((gate): Gate => ({
    name: gate.name,
    default: gate.default,
    ...(gate.window !== undefined && { windowMs: gate.window }),
    ...(gate.description !== undefined && { description: gate.description }),
    schedules: gate.schedules ?? [],
    approval: gate.approval ?? DEFAULTS.approval,
    approvers: gate.approvers ?? DEFAULTS.approvers,
    ...(gate.sessionNamedRoles !== undefined && { sessionNamedRoles: gate.sessionNamedRoles }),
    ...(gate.requireVerified && { requireVerified: true }),
    ...(gate.preventSelfApproval && { preventSelfApproval: true }),
    ...(gate.freezes?.length && { freezes: gate.freezes }),
    ...(gate.calendars?.length && { calendars: gate.calendars }),
    ...(gate.changeCalendars?.length && { changeCalendars: gate.changeCalendars }),
    ...(gate.holidays !== undefined && { holidays: gate.holidays }),
    ...(gate.alarms?.length && {
      alarms: gate.alarms,
      insufficientData: gate.insufficientData ?? DEFAULTS.insufficientData,
    }),
    ...(gate.maxOverride !== undefined && { maxOverrideMs: gate.maxOverride }),
  }));

/** A gate or schedule window: a duration of at most MAX_WINDOW_MS. */
function gateWindow() {
  return duration().refine((ms) => ms <= MAX_WINDOW_MS, {
    message: `must be at most ${formatDuration(MAX_WINDOW_MS)} (a year): a request lasting longer is a mistake`,
  });
}
