// What can hold a delivery's run: its gates, the mass-deletion brake, its dependencies.
import * as z from 'zod';
import { DEFAULTS } from './defaults.ts';
import { isRecord } from './issues.ts';
import type { GateRef, PruneLimit } from './types.ts';
import { name, strict } from './fields.ts';

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

/** Delivery names, each once; `{ name }` objects (Flux's form) are accepted too. */
export const dependsOnSchema = z
  .array(
    z.union([name('delivery name'), strict({ name: name('delivery name') }).transform((ref) => ref.name)]),
  )
  .superRefine(
    (names, ctx) => {
      names.forEach((dependency, index) => {
        if (names.indexOf(dependency) !== index)
          ctx.addIssue({ code: 'custom', message: `"${dependency}" is listed twice`, path: [index] });
      });
    },
    { when: (payload) => Array.isArray(payload.value) },
  );
