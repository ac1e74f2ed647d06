// `source`: where a delivery's artifact comes from (Flux's OCIRepository url and ref, in one).
import semver from 'semver';
import * as z from 'zod';
import { DEFAULTS } from './defaults.ts';
import { isRecord } from './issues.ts';
import { isEcrHost } from '../oci/ecr-host.ts';
import { kmsKeyArnProblem } from '../oci/kms-key-arn.ts';
import { publicKeyProblem } from '../oci/verify.ts';
import { trustedRootShapeProblem } from '../oci/keyless-rules.ts';
import { keylessSchema } from './keyless-schema.ts';
import { notationScopeProblem, notationVerifySchema, toNotationVerification } from './notation-schema.ts';
import type { DeliverySource } from './types.ts';
import {
  DIGEST,
  MEDIA_TYPE,
  OCI_REPOSITORY,
  OCI_TAG,
  REGISTRY_HOST,
  checked,
  listing,
  strict,
} from './fields.ts';

/** `aws` for an ECR registry host, else `generic`. */
export function defaultProvider(url: string): 'aws' | 'generic' {
  const host = url.replace(/^oci:\/\//, '').split('/')[0]!;
  return isEcrHost(host) ? 'aws' : 'generic';
}

function urlProblem(url: string): string | undefined {
  const shape = '(expected oci://host/repository)';
  if (!url.startsWith('oci://')) {
    return `"${url}" must start with oci:// (e.g. oci://123456789012.dkr.ecr.eu-west-1.amazonaws.com/app)`;
  }
  const rest = url.slice('oci://'.length);
  const slash = rest.indexOf('/');
  const host = slash < 0 ? rest : rest.slice(0, slash);
  const repository = slash < 0 ? '' : rest.slice(slash + 1);
  if (host === '') return `"${url}" has no registry host ${shape}`;
  if (!REGISTRY_HOST.test(host)) return `"${url}" has an invalid registry host "${host}" ${shape}`;
  if (repository === '') return `"${url}" has no repository ${shape}`;
  if (/[:@]/.test(repository)) {
    return `"${url}" must not include a tag or digest; set source.tag, source.semver or source.digest instead`;
  }
  if (!OCI_REPOSITORY.test(repository)) {
    return `"${url}" has an invalid repository "${repository}" (lowercase letters and digits, separated by ".", "_", "-" or "/")`;
  }
  return undefined;
}

export const sourceSchema = strict({
  url: checked(urlProblem),
  tag: checked((tag) =>
    OCI_TAG.test(tag)
      ? undefined
      : `"${tag}" is not a valid tag (at most 128 letters, digits, "_", "." or "-", not starting with "." or "-")`,
  ).optional(),
  semver: checked((range) =>
    semver.validRange(range) === null
      ? `"${range}" is not a valid semver range (e.g. "^1.4", "1.x", ">=1.0.0 <2.0.0")`
      : undefined,
  ).optional(),
  digest: checked((digest) =>
    DIGEST.test(digest)
      ? undefined
      : `"${digest}" is not a digest: expected sha256: followed by 64 lowercase hex digits`,
  ).optional(),
  provider: z.enum(['aws', 'generic']).optional(),
  insecure: z.boolean().optional(),
  layerMediaType: checked((type) =>
    MEDIA_TYPE.test(type)
      ? undefined
      : `"${type}" is not a media type (e.g. application/vnd.cncf.flux.content.v1.tar+gzip)`,
  ).optional(),
  verify: z
    .discriminatedUnion(
      'provider',
      [
        notationVerifySchema,
        strict({
          provider: z.literal('cosign', { error: 'provider is "cosign" or "notation"' }),
          publicKeys: z
            .array(checked(publicKeyProblem))
            .min(1, { error: 'name at least one public key (PEM, as cosign.pub)' })
            .optional(),
          kmsKeyArn: checked(kmsKeyArnProblem).optional(),
          keyless: keylessSchema.optional(),
          trustedRoot: checked(trustedRootShapeProblem).optional(),
        })
          // One trust anchor per verify block: a pasted key beside a KMS key would keep the key nobody
          // rotates trusted. To move to a KMS key, sign the running digest with it too (cosign adds a
          // signature beside the old one), then name only the KMS key.
          .superRefine(
            (verify, ctx) => {
              const set = (['publicKeys', 'kmsKeyArn', 'keyless'] as const).filter(
                (key) => verify[key] !== undefined,
              );
              if (set.length !== 1)
                ctx.addIssue({
                  code: 'custom',
                  message:
                    set.length === 0
                      ? 'name the signer: publicKeys (PEM public keys), kmsKeyArn (an AWS KMS key ARN) or keyless (the OIDC issuer and subject of a Fulcio certificate)'
                      : `set one of publicKeys, kmsKeyArn and keyless, not ${listing(set)}: one verify block trusts one kind of signer (to move to another, sign the running digest with it as well, then name only it)`,
                });
              if (verify.trustedRoot !== undefined && verify.keyless === undefined)
                ctx.addIssue({
                  code: 'custom',
                  path: ['trustedRoot'],
                  message: 'a trusted root is for keyless signatures: set keyless, or remove trustedRoot',
                });
            },
            { when: (payload) => isRecord(payload.value) },
          ),
      ],
      {
        error: (issue) => (issue.code === 'invalid_union' ? 'provider is "cosign" or "notation"' : undefined),
      },
    )
    .optional(),
})
  .superRefine(
    (source, ctx) => {
      const scope = notationScopeProblem(source.url, source.verify);
      if (scope)
        ctx.addIssue({ code: 'custom', path: ['verify', 'trustPolicy', 'registryScopes'], message: scope });
      const set = (['tag', 'semver', 'digest'] as const).filter((key) => source[key] !== undefined);
      if (set.length > 1) {
        ctx.addIssue({
          code: 'custom',
          message: `set only one of tag, semver and digest (found ${listing(set)})`,
        });
      }
    },
    { when: (payload) => isRecord(payload.value) },
  )
  .transform((source): DeliverySource => ({
    url: source.url,
    ...(source.semver !== undefined
      ? { semver: source.semver }
      : source.digest !== undefined
        ? { digest: source.digest }
        : { tag: source.tag ?? DEFAULTS.tag }),
    provider: source.provider ?? defaultProvider(source.url),
    insecure: source.insecure ?? DEFAULTS.insecure,
    ...(source.layerMediaType !== undefined && { layerMediaType: source.layerMediaType }),
    ...(source.verify !== undefined && {
      verify:
        source.verify.provider === 'notation'
          ? toNotationVerification(source.verify)
          : source.verify.kmsKeyArn !== undefined
            ? { provider: source.verify.provider, kmsKeyArn: source.verify.kmsKeyArn }
            : source.verify.keyless !== undefined
              ? {
                  provider: source.verify.provider,
                  keyless: source.verify.keyless,
                  ...(source.verify.trustedRoot !== undefined && { trustedRoot: source.verify.trustedRoot }),
                }
              : { provider: source.verify.provider, publicKeys: source.verify.publicKeys ?? [] },
    }),
  }));
