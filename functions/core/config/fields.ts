// The building blocks of the config schema: the patterns fields are checked against, and
// helpers for strict objects, checked strings, durations, names and maps.
import * as z from 'zod';
import { DURATION_HINT, parseDuration } from './duration.ts';
import { closest, isRecord } from './issues.ts';

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
export const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
export const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
export const REGISTRY_HOST =
  /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?)(?::\d{1,5})?$/;
export const OCI_REPOSITORY =
  /^[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*(?:\/[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*)*$/;
export const OCI_TAG = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/;
export const DIGEST = /^sha256:[a-f0-9]{64}$/;
export const DIGEST_OF_ANY_ALGORITHM = /^[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[a-zA-Z0-9=_-]{32,}$/;
export const MEDIA_TYPE = /^[\w.+-]+\/[\w.+-]+$/;
export const EKS_NAME = /^[0-9A-Za-z][A-Za-z0-9_-]{0,99}$/;
export const AWS_REGION = /^[a-z]{2}(?:-[a-z]+)+-\d+$/;
export const ROLE_ARN = /^arn:aws(?:-[a-z]+)*:iam::\d{12}:role\/[\w+=,.@/-]{1,512}$/;
export const VARIABLE = /^[_a-zA-Z][_a-zA-Z0-9]*$/;
export const API_VERSION =
  /^(?:[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*\/)?[a-z0-9](?:[-a-z0-9]*[a-z0-9])?$/;
export const KIND = /^[A-Za-z](?:[-A-Za-z0-9]*[A-Za-z0-9])?$/;
export const KMS_KEY_ARN =
  /^arn:aws(?:-[a-z]+)*:kms:[a-z]{2}(?:-[a-z]+)+-\d+:\d{12}:key\/[A-Za-z0-9-]{1,128}$/;
export const SECRET_ARN =
  /^arn:aws(?:-[a-z]+)*:secretsmanager:[a-z]{2}(?:-[a-z]+)+-\d+:\d{12}:secret:[\w/+=.@-]{1,512}$/;

/** `a`, `a and b`, `a, b and c` */
export function listing(items: readonly string[]): string {
  return items.length <= 1 ? items.join('') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;
}

export type Check = (value: string) => string | undefined;

/** A non-empty string that passes `check` (which returns a problem, or undefined). */
export function checked(check: Check = () => undefined) {
  return z.string().superRefine((value, ctx) => {
    const problem = value === '' ? 'must not be empty' : check(value);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });
}

/** A strict object whose unknown-field errors suggest the nearest known field. */
export function strict<T extends z.core.$ZodLooseShape>(shape: T) {
  const known = Object.keys(shape);
  return z.strictObject(shape, {
    error: (issue) => {
      if (issue.code !== 'unrecognized_keys') return undefined;
      return issue.keys
        .map((key) => {
          const near = closest(key, known);
          return `unknown field "${key}"${near ? ` (did you mean "${near}"?)` : ''}`;
        })
        .join('\n');
    },
  });
}

/** A positive duration string (`30s`, `1h30m`) → milliseconds. */
export function duration() {
  return z
    .string({
      error: (issue) =>
        issue.code === 'invalid_type' && typeof issue.input === 'number'
          ? `${issue.input} is not a duration: the number needs a unit (ms, s, m, h or d), e.g. ${issue.input}s`
          : undefined,
    })
    .transform((value, ctx) => {
      try {
        const ms = parseDuration(value);
        if (ms > 0) return ms;
        ctx.addIssue({ code: 'custom', message: `must be longer than zero (${DURATION_HINT})` });
      } catch (error) {
        ctx.addIssue({ code: 'custom', message: (error as Error).message });
      }
      return z.NEVER;
    });
}

const labelProblem =
  (what: string): Check =>
  (value) =>
    value.length <= 63 && DNS_LABEL.test(value)
      ? undefined
      : `"${value}" is not a valid ${what}: use at most 63 lowercase letters, digits and "-", starting and ending with a letter or digit`;

export const name = (what: string) => checked(labelProblem(what));

export function qualifiedNameProblem(what: string): Check {
  return (key) => {
    const parts = key.split('/');
    const [prefix, local] = parts.length === 2 ? parts : [undefined, parts[0]];
    const ok =
      parts.length <= 2 &&
      (prefix === undefined || (prefix.length <= 253 && DNS_SUBDOMAIN.test(prefix))) &&
      local !== undefined &&
      local.length <= 63 &&
      QUALIFIED_NAME.test(local);
    return ok
      ? undefined
      : `"${key}" is not a valid ${what} (an optional DNS prefix and "/", then at most 63 letters, digits, "-", "_" or ".", starting and ending with a letter or digit)`;
  };
}

/** A string → string map whose keys (and values) pass the checks. */
export function stringMap(keyProblem: Check, valueProblem?: Check) {
  return z.record(z.string(), z.string()).superRefine(
    (map, ctx) => {
      for (const [key, value] of Object.entries(map)) {
        const problem = keyProblem(key) ?? (typeof value === 'string' ? valueProblem?.(value) : undefined);
        if (problem) ctx.addIssue({ code: 'custom', message: problem, path: [key] });
      }
    },
    { when: (payload) => isRecord(payload.value) },
  );
}
