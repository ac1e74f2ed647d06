// What can hold a delivery's run: its gates, the mass-deletion brake, its dependencies.
import * as z from 'zod';
import { DEFAULTS, MAX_SOAK_MS } from './defaults.ts';
import { formatDuration } from './duration.ts';
import { isRecord } from './issues.ts';
import type { DeliveryDependency, GateRef, PruneLimit } from './types.ts';
import { duration, name, strict } from './fields.ts';

export const gateRefsSchema = z
  .array(
    strict({ name: name('gate name'), blocks: z.enum(['all', 'revisions']).optional() }).transform(
      (ref): GateRef => ({ name: ref.name, blocks: ref.blocks ?? DEFAULTS.blocks }),
    ),
  )
  .superRefine(
    (refs, ctx) => {
      const seen = new Set<unknown>();
      refs.forEach((ref, index) => {
        const refName: unknown = isRecord(ref) ? ref.name : undefined;
        if (typeof refName !== 'string') return;
        if (seen.has(refName)) {
          ctx.addIssue({
            code: 'custom',
            message: `gate "${refName}" is listed more than once`,
            path: [index, 'name'],
          });
        }
        seen.add(refName);
      });
    },
    { when: (payload) => Array.isArray(payload.value) },
  );

const PRUNE_LIMIT_HINT = 'use a share of the inventory like "50%" or a number of objects like 20';

/** `"50%"` (a share of the inventory) or `20` / `"20"` (a number of objects). */
export const pruneLimitSchema = z.union([z.number(), z.string()]).transform((value, ctx): PruneLimit => {
  const text = String(value).trim();
  const percent = /^(\d{1,3})%$/.exec(text);
  if (percent && Number(percent[1]) <= 100) return { percent: Number(percent[1]) };
  if (/^\d+$/.test(text) && Number.isSafeInteger(Number(text))) return { count: Number(text) };
  ctx.addIssue({
    code: 'custom',
    message: `${JSON.stringify(value)} is not a prune limit: ${PRUNE_LIMIT_HINT}`,
  });
  return z.NEVER;
});

/**
 * The deliveries depended on, each once: a name, or `{ name, soak }` (Flux's `{ name }` form, with
 * how long the dependency must have been Ready at its revision).
 */
export const dependsOnSchema = z
  .array(
    // A bare name is `{ name }`, so a problem is reported at the field it is in.
    z.preprocess(
      (ref) => (typeof ref === 'string' ? { name: ref } : ref),
      strict({ name: name('delivery name'), soak: soakDuration().optional() }).transform(
        (ref): DeliveryDependency => ({
          name: ref.name,
          ...(ref.soak !== undefined && { soakMs: ref.soak }),
        }),
      ),
    ),
  )
  .superRefine(
    (dependencies, ctx) => {
      const names = dependencies.map((dependency) => dependency.name);
      names.forEach((dependency, index) => {
        if (names.indexOf(dependency) !== index)
          ctx.addIssue({ code: 'custom', message: `"${dependency}" is listed twice`, path: [index] });
      });
    },
    { when: (payload) => Array.isArray(payload.value) },
  );

/** A soak: a duration (longer than zero) of at most MAX_SOAK_MS. */
export function soakDuration() {
  return duration().refine((ms) => ms <= MAX_SOAK_MS, {
    message: `must be at most ${formatDuration(MAX_SOAK_MS)}: a longer soak is a mistake`,
  });
}
