// `healthCheckExprs`: CEL health checks per group and kind (their CEL is checked apart, in cel/).
import * as z from 'zod';
import { isRecord } from './issues.ts';
import type { HealthCheckExpr } from './types.ts';
import { API_VERSION, KIND, checked, strict } from './fields.ts';

/**
 * A CEL expression: its syntax and functions are checked apart from the schema (cel/check-config.ts),
 * so that the CEL library stays out of the handlers that only read configs.
 */
const celCondition = () => checked();

const healthCheckExprSchema = strict({
  apiVersion: checked((value) =>
    API_VERSION.test(value)
      ? undefined
      : `"${value}" is not an apiVersion (group/version, e.g. example.com/v1, or v1 for the core group)`,
  ),
  kind: checked((value) =>
    KIND.test(value)
      ? undefined
      : `"${value}" is not a kind (letters, digits and "-", starting with a letter, e.g. Widget)`,
  ),
  current: celCondition(),
  inProgress: celCondition().optional(),
  failed: celCondition().optional(),
}).transform((entry): HealthCheckExpr => ({
  apiVersion: entry.apiVersion,
  kind: entry.kind,
  current: entry.current,
  ...(entry.inProgress !== undefined && { inProgress: entry.inProgress }),
  ...(entry.failed !== undefined && { failed: entry.failed }),
}));

/** One entry per group and kind: like Flux, an entry applies to every version of its kind. */
export const healthCheckExprsSchema = z.array(healthCheckExprSchema).superRefine(
  (entries, ctx) => {
    const first = new Map<string, number>();
    entries.forEach((entry, index) => {
      if (!isRecord(entry) || typeof entry.apiVersion !== 'string' || typeof entry.kind !== 'string') return;
      // `example.com/Widget` whatever the version, or `Service` for the core group.
      const [group, version] = entry.apiVersion.split('/');
      const key = version === undefined ? entry.kind : `${group}/${entry.kind}`;
      const earlier = first.get(key);
      if (earlier === undefined) first.set(key, index);
      else {
        ctx.addIssue({
          code: 'custom',
          message: `${key} is listed more than once (also healthCheckExprs[${earlier}]); an entry covers every version of its group and kind`,
          path: [index],
        });
      }
    });
  },
  { when: (payload) => Array.isArray(payload.value) },
);
