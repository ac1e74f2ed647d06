/**
 * The one zod schema for gates and deliveries, shared by the CLI config file and the CDK construct
 * props. Input durations are strings (`5m`); output is the normalised types in types.ts. A config
 * is its gates (gate-schema.ts) and deliveries (delivery-schema.ts, made of the field schemas in
 * source-schema.ts, manifest-schemas.ts, target-schemas.ts, health-schemas.ts, hold-schemas.ts)
 * and rollouts (rollout-schema.ts), checked across (cross-checks.ts, rollout-members.ts).
 */
import * as z from 'zod';
import { isRecord } from './issues.ts';
import type { SluiceConfig } from './types.ts';
import { crossCheck } from './cross-checks.ts';
import { deliverySchema } from './delivery-schema.ts';
import { calendarHostProblem, calendarUrlProblem } from './calendar-sources.ts';
import { checked, strict } from './fields.ts';
import { gateSchema } from './gate-schema.ts';
import { checkRollouts, settleRollouts } from './rollout-members.ts';
import { rolloutSchema } from './rollout-schema.ts';

export const configSchema = strict({
  gates: z.array(gateSchema).optional(),
  deliveries: z.array(deliverySchema).optional(),
  rollouts: z.array(rolloutSchema).optional(),
  calendarHosts: z.array(checked(calendarHostProblem)).max(20, 'at most 20 hosts').optional(),
})
  .superRefine(
    (config, ctx) => {
      crossCheck(config, ctx);
      checkRollouts(config, ctx);
      checkCalendarHosts(config, ctx);
    },
    { when: (payload) => isRecord(payload.value) },
  )
  .transform((config): SluiceConfig => ({
    gates: config.gates ?? [],
    deliveries: config.deliveries ?? [],
    rollouts: settleRollouts(config.rollouts ?? [], config.deliveries ?? []),
    ...(config.calendarHosts?.length && { calendarHosts: [...new Set(config.calendarHosts)] }),
  }));

/** Each calendar read from a URL names a host `calendarHosts` allows: the functions read no other. */
function checkCalendarHosts(config: Record<string, unknown>, ctx: z.core.$RefinementCtx): void {
  const hosts = Array.isArray(config.calendarHosts)
    ? config.calendarHosts.filter((host): host is string => typeof host === 'string')
    : [];
  if (!Array.isArray(config.gates)) return;
  config.gates.forEach((gate: unknown, gateIndex) => {
    if (!isRecord(gate) || !Array.isArray(gate.calendars)) return;
    gate.calendars.forEach((calendar: unknown, index) => {
      // A gate that parsed is in its normalised form (`source: {url}`); one that did not, as written.
      const url = !isRecord(calendar)
        ? undefined
        : typeof calendar.url === 'string'
          ? calendar.url
          : isRecord(calendar.source) && typeof calendar.source.url === 'string'
            ? calendar.source.url
            : undefined;
      if (url === undefined || calendarUrlProblem(url)) return; // the calendar's own schema says what is wrong
      const problem = calendarUrlProblem(url, hosts);
      if (problem)
        ctx.addIssue({
          code: 'custom',
          path: ['gates', gateIndex, 'calendars', index, 'url'],
          message: problem,
        });
    });
  });
}

/** What a config file or construct props may hold (durations as strings). */
export type ConfigInput = z.input<typeof configSchema>;
export type DeliveryInput = z.input<typeof deliverySchema>;
export type GateInput = z.input<typeof gateSchema>;
export type RolloutInput = z.input<typeof rolloutSchema>;
