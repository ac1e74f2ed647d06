// `source.verify` with `provider: notation`: a Notation trust policy and its trust stores, or
// `awsSigner`. What sluice does not understand or would not enforce is refused here, by name.
import * as z from 'zod';
import { isRecord } from './issues.ts';
import { checked, strict } from './fields.ts';
import {
  caCertificatesProblem,
  registryScopesProblem,
  scopeCovers,
  signingProfileArnProblem,
  trustedIdentitiesProblem,
  trustStoreProblem,
  type NotationVerification,
} from '../oci/notation-policy.ts';

const LEVELS = ['strict', 'permissive'] as const;

const levelSchema = z.string().superRefine((level, ctx) => {
  if ((LEVELS as readonly string[]).includes(level)) return;
  ctx.addIssue({
    code: 'custom',
    message:
      level === 'audit' || level === 'skip'
        ? `level "${level}" does not enforce who signed (Notation's ${level} only logs a failed authenticity check): sluice enforces strict or permissive; to not verify, remove verify`
        : `unknown level "${level}" (expected strict or permissive)`,
  });
});

const trustPolicySchema = strict({
  name: z.string().optional(),
  registryScopes: z
    .array(z.string())
    .min(1)
    .superRefine((scopes, ctx) => {
      const problem = registryScopesProblem(scopes);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    })
    .optional(),
  signatureVerification: strict({
    level: levelSchema,
    override: z
      .unknown()
      .optional()
      .superRefine((override, ctx) => {
        if (override !== undefined)
          ctx.addIssue({
            code: 'custom',
            message: 'override is not supported: choose level strict or permissive',
          });
      }),
    verifyTimestamp: z
      .unknown()
      .optional()
      .superRefine((value, ctx) => {
        if (value !== undefined)
          ctx.addIssue({
            code: 'custom',
            message: 'verifyTimestamp is not supported: sluice verifies no timestamp countersignatures',
          });
      }),
  }),
  trustStores: z
    .array(checked(trustStoreProblem))
    .min(1, { error: 'name at least one trust store, e.g. "ca:release"' }),
  trustedIdentities: z
    .array(z.string())
    .min(1, { error: 'name at least one identity, e.g. "x509.subject: C=US, ST=WA, O=Example, CN=release"' })
    .superRefine((identities, ctx) => {
      const problem = trustedIdentitiesProblem(identities);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    }),
});

const awsSignerSchema = strict({
  profileArns: z
    .array(checked(signingProfileArnProblem))
    .min(1, { error: 'name at least one signing profile ARN' }),
  rootCertificates: z
    .array(checked(caCertificatesProblem))
    .min(1, { error: "give AWS Signer's Notation root certificate (PEM), as AWS publishes it" }),
});

export const notationVerifySchema = strict({
  provider: z.literal('notation'),
  trustPolicy: trustPolicySchema.optional(),
  trustStores: z
    .record(checked(trustStoreProblem), z.array(checked(caCertificatesProblem)).min(1))
    .optional(),
  awsSigner: awsSignerSchema.optional(),
}).superRefine(
  (verify, ctx) => {
    if ((verify.awsSigner === undefined) === (verify.trustPolicy === undefined)) {
      ctx.addIssue({
        code: 'custom',
        message:
          verify.awsSigner === undefined
            ? 'name the signer: trustPolicy (with trustStores) or awsSigner'
            : 'set trustPolicy or awsSigner, not both: one verify block trusts one kind of signer',
      });
      return;
    }
    if (verify.awsSigner !== undefined) {
      if (verify.trustStores !== undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['trustStores'],
          message: 'awsSigner takes its root in awsSigner.rootCertificates, not trustStores',
        });
      return;
    }
    const stores = verify.trustStores ?? {};
    for (const store of verify.trustPolicy!.trustStores)
      if (!(store in stores))
        ctx.addIssue({
          code: 'custom',
          path: ['trustStores'],
          message: `the trust policy names trust store "${store}", which trustStores does not hold (give its PEM certificates under "${store}")`,
        });
    for (const store of Object.keys(stores))
      if (!verify.trustPolicy!.trustStores.includes(store))
        ctx.addIssue({
          code: 'custom',
          path: ['trustStores', store],
          message: `trust store "${store}" is not named by trustPolicy.trustStores`,
        });
  },
  { when: (payload) => isRecord(payload.value) },
);

/** The parsed notation verify block, normalised (unset trustPolicy fields left out). */
export function toNotationVerification(verify: z.output<typeof notationVerifySchema>): NotationVerification {
  if (verify.awsSigner !== undefined) return { provider: 'notation', awsSigner: verify.awsSigner };
  const policy = verify.trustPolicy!;
  return {
    provider: 'notation',
    trustPolicy: {
      ...(policy.registryScopes && { registryScopes: policy.registryScopes }),
      signatureVerification: { level: policy.signatureVerification.level as 'strict' | 'permissive' },
      trustStores: policy.trustStores,
      trustedIdentities: policy.trustedIdentities,
    },
    trustStores: verify.trustStores!,
  };
}

/**
 * Why a notation trust policy's registryScopes does not cover the source's repository, or
 * undefined (no scopes, `*`, or `host/repository` listed): a policy for other repositories would
 * never apply, as Notation finds no applicable policy.
 */
export function notationScopeProblem(url: string, verify: unknown): string | undefined {
  if (!isRecord(verify) || verify.provider !== 'notation') return undefined;
  const scopes = (verify.trustPolicy as { registryScopes?: readonly string[] } | undefined)?.registryScopes;
  if (!scopes) return undefined;
  const scope = url.replace(/^oci:\/\//, '');
  return scopeCovers(scopes, scope)
    ? undefined
    : `registryScopes (${scopes.join(', ')}) does not include this source's repository ${scope}: the policy would apply to no signature of it`;
}
