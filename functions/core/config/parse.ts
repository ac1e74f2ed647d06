import type { z } from 'zod';
import { ConfigError, issueMessage, toConfigIssues } from './issues.ts';
import { deliverySchema } from './delivery-schema.ts';
import { gateSchema } from './gate-schema.ts';
import { rolloutSchema } from './rollout-schema.ts';
import { configSchema } from './schema.ts';
import type { Delivery, Gate, Rollout, SluiceConfig } from './types.ts';

function parseWith<T>(schema: z.ZodType<T>, input: unknown, origin: string): T {
  const result = schema.safeParse(input, { error: issueMessage });
  if (result.success) return result.data;
  throw new ConfigError(origin, toConfigIssues(result.error.issues, input));
}

function named(kind: string, input: unknown): string {
  const name = (input as { name?: unknown } | null | undefined)?.name;
  return typeof name === 'string' && name !== '' ? `${kind} ${name}` : kind;
}

/** Validates a whole config (file or props); throws a ConfigError listing every problem. */
export function parseConfig(input: unknown, origin = 'config'): SluiceConfig {
  return parseWith(configSchema, input, origin);
}

/** Validates one delivery; gate references are not checked against gates here (parseConfig does). */
export function parseDelivery(input: unknown, origin = named('delivery', input)): Delivery {
  return parseWith(deliverySchema, input, origin);
}

/** Validates one gate. */
export function parseGate(input: unknown, origin = named('gate', input)): Gate {
  return parseWith(gateSchema, input, origin);
}

/**
 * Validates one rollout as stored (its waves name their deliveries; patterns are settled against
 * the deliveries by parseConfig).
 */
export function parseRollout(input: unknown, origin = named('rollout', input)): Rollout {
  return parseWith(rolloutSchema, input, origin);
}
