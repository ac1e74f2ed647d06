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
import { strict } from './fields.ts';
import { gateSchema } from './gate-schema.ts';
import { checkRollouts, settleRollouts } from './rollout-members.ts';
import { rolloutSchema } from './rollout-schema.ts';

export const configSchema = strict({
  gates: z.array(gateSchema).optional(),
  deliveries: z.array(deliverySchema).optional(),
  rollouts: z.array(rolloutSchema).optional(),
})
  .superRefine(
    (config, ctx) => {
      crossCheck(config, ctx);
      checkRollouts(config, ctx);
    },
    { when: (payload) => isRecord(payload.value) },
  )
  .transform((config): SluiceConfig => ({
    gates: config.gates ?? [],
    deliveries: config.deliveries ?? [],
    rollouts: settleRollouts(config.rollouts ?? [], config.deliveries ?? []),
  }));

/** What a config file or construct props may hold (durations as strings). */
export type ConfigInput = z.input<typeof configSchema>;
export type DeliveryInput = z.input<typeof deliverySchema>;
export type GateInput = z.input<typeof gateSchema>;
export type RolloutInput = z.input<typeof rolloutSchema>;
