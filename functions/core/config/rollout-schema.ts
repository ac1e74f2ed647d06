// One rollout (release waves): its source, its waves of delivery patterns, soaks and gates. Which
// deliveries a pattern takes is settled across the config (rollout-members.ts).
import * as z from 'zod';
import { DEFAULTS, MAX_ROLLOUT_PARALLEL } from './defaults.ts';
import { checked, name, strict } from './fields.ts';
import { soakDuration } from './hold-schemas.ts';
import { sourceSchema } from './source-schema.ts';
import type { Rollout, RolloutWave } from './types.ts';

/** A delivery name, or a pattern of one: lowercase letters, digits and "-", with `*` (any run) and `?` (one). */
const PATTERN = /^[a-z0-9*?]([-a-z0-9*?]*[a-z0-9*?])?$/;

/** Whether a string is a well-formed delivery name or pattern. */
export const isPattern = (pattern: string): boolean => pattern.length <= 63 && PATTERN.test(pattern);

export const patternSchema = checked((pattern) =>
  isPattern(pattern)
    ? undefined
    : `"${pattern}" is not a delivery name or pattern: use lowercase letters, digits and "-", with "*" for any run of them and "?" for one`,
);

const waveSchema = strict({
  deliveries: z.array(patternSchema).min(1, 'name at least one delivery or pattern (e.g. "canary-*", "*")'),
  soak: soakDuration().optional(),
  gate: name('gate name').optional(),
});

export const rolloutSchema = strict({
  name: name('rollout name'),
  source: sourceSchema,
  waves: z.array(waveSchema).min(1, 'a rollout needs at least one wave'),
  maxParallel: z
    .number()
    .int('must be a whole number')
    .min(1, 'must be at least 1')
    .max(MAX_ROLLOUT_PARALLEL, `must be at most ${MAX_ROLLOUT_PARALLEL}`)
    .optional(),
  supersede: z.enum(['wait', 'restart']).optional(),
}).transform((input): Rollout => ({
  name: input.name,
  source: input.source,
  // Members are settled against the config's deliveries (rollout-members.ts); alone, the
  // patterns are names (as the construct writes a stored rollout's spec).
  waves: input.waves.map((wave): RolloutWave => ({
    patterns: wave.deliveries,
    deliveries: [...new Set(wave.deliveries)],
    ...(wave.soak !== undefined && { soakMs: wave.soak }),
    ...(wave.gate !== undefined && { gate: wave.gate }),
  })),
  ...(input.maxParallel !== undefined && { maxParallel: input.maxParallel }),
  supersede: input.supersede ?? DEFAULTS.supersede,
}));

/**
 * Whether `name` matches `pattern` (`*`: any run of characters, `?`: one), in at most
 * length(pattern) × length(name) steps: a RegExp of `*a*a*a…` backtracks for longer than that by
 * far on a name that does not match.
 */
export function matchesPattern(pattern: string, name: string): boolean {
  const glob = [...pattern];
  const text = [...name];
  // Only the last `*` is ever returned to: what an earlier one took can be taken by it as well.
  let g = 0;
  let t = 0;
  let star = -1;
  let resume = 0;
  while (t < text.length) {
    if (g < glob.length && (glob[g] === '?' || (glob[g] !== '*' && glob[g] === text[t]))) {
      g++;
      t++;
    } else if (g < glob.length && glob[g] === '*') {
      star = g++;
      resume = t;
    } else if (star >= 0) {
      g = star + 1;
      t = ++resume;
    } else return false;
  }
  while (g < glob.length && glob[g] === '*') g++;
  return g === glob.length;
}

/** Whether a pattern is a plain delivery name (no `*` or `?`). */
export const isPlainName = (pattern: string): boolean => !/[*?]/.test(pattern);
