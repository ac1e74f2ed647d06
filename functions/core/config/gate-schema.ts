// One gate: its default, window, approvals and cron schedules, normalised to the Gate type.
import * as z from 'zod';
import { closedPeriodFields } from './closed-period-schemas.ts';
import { cronProblem, timeZoneProblem, unwrapCron } from './cron.ts';
import { alarmsSchema } from './alarm-fields.ts';
import { DEFAULTS, MAX_APPROVERS, MAX_OVERRIDE_LIMIT_MS, MAX_WINDOW_MS } from './defaults.ts';
import { formatDuration } from './duration.ts';
import { holidaySetSchema } from './holiday-sets.ts';
import { HELD_ACTIONS, heldActionsProblem } from './held-actions.ts';
import type { Gate, GateSchedule } from './types.ts';
import { checked, duration, name, strict } from './fields.ts';

const scheduleSchema = strict({
  cron: checked((expression) => cronProblem(expression)).transform(unwrapCron),
  timeZone: checked(timeZoneProblem).optional(),
  action: z.enum(['open', 'close']),
  window: dayAwareWindow().optional(),
}).transform((schedule): GateSchedule => ({
  cron: schedule.cron,
  timeZone: schedule.timeZone ?? DEFAULTS.timeZone,
  action: schedule.action,
  ...(schedule.window !== undefined && { windowMs: schedule.window.ms }),
  ...(schedule.window?.days !== undefined && { windowDays: schedule.window.days }),
}));

export const gateSchema = strict({
  name: name('gate name'),
  default: z.enum(['open', 'closed']),
  window: dayAwareWindow().optional(),
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
  holds: z.array(z.enum(HELD_ACTIONS)).optional(),
})
  .superRefine((gate, ctx) => {
    if (gate.holds !== undefined) {
      const problem = heldActionsProblem(gate.holds);
      if (problem) ctx.addIssue({ code: 'custom', path: ['holds'], message: problem });
    }
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
    ...(gate.window !== undefined && { windowMs: gate.window.ms }),
    ...(gate.description !== undefined && { description: gate.description }),
    schedules: (gate.schedules ?? []).map((schedule) =>
      // A schedule without a window of its own takes the gate's, in whole days if it is written so.
      schedule.windowMs === undefined && gate.window?.days !== undefined
        ? { ...schedule, windowDays: gate.window.days }
        : schedule,
    ),
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
    // Stored only when it says more than the default, so the specs of existing gates do not change.
    ...(gate.holds?.includes('rollback') && { holds: [...HELD_ACTIONS] }),
  }));

/**
 * A gate or schedule window and, when it is written in whole days (`1d`, `7d`), their number: a
 * schedule's firing then lasts that many calendar days in its time zone (25 hours across clocks
 * going back), not that many times 24 hours.
 */
function dayAwareWindow() {
  // Typed as the string it should be; gateWindow() says what is wrong with anything else.
  return z
    .custom<string>(() => true)
    .transform((value, ctx): { ms: number; days?: number } => {
      const parsed = gateWindow().safeParse(value);
      if (!parsed.success) {
        for (const issue of parsed.error.issues) ctx.addIssue({ code: 'custom', message: issue.message });
        return z.NEVER;
      }
      const days = /^\s*(\d+)d\s*$/.exec(value)?.[1];
      return { ms: parsed.data, ...(days !== undefined && { days: Number(days) }) };
    });
}

/** A gate or schedule window: a duration of at most MAX_WINDOW_MS. */
function gateWindow() {
  return duration().refine((ms) => ms <= MAX_WINDOW_MS, {
    message: `must be at most ${formatDuration(MAX_WINDOW_MS)} (a year): a request lasting longer is a mistake`,
  });
}
