// What is done to a delivery's manifests: the path in the artifact, patches, images, decryption.
import { posix } from 'node:path';
import * as z from 'zod';
import { isRecord } from './issues.ts';
import { patchProblems } from './patches.ts';
import type { Decryption, DeliveryPatch, ImageOverride } from './types.ts';
import {
  type Check,
  DIGEST_OF_ANY_ALGORITHM,
  KMS_KEY_ARN,
  SECRET_ARN,
  checked,
  name,
  strict,
} from './fields.ts';

export const pathSchema = checked((path) => {
  if (path.startsWith('/')) return `"${path}" must be relative to the artifact root (no leading "/")`;
  if (path.split('/').includes('..')) return `"${path}" must not contain ".."`;
  return undefined;
}).transform((path) => posix.normalize(path).replace(/(.)\/+$/, '$1'));

export const patchSchema = strict({
  patch: z.string(),
  target: strict({
    group: checked().optional(),
    version: checked().optional(),
    kind: checked().optional(),
    name: checked().optional(),
    namespace: checked().optional(),
    labelSelector: checked().optional(),
    annotationSelector: checked().optional(),
  }).optional(),
})
  .superRefine(
    (entry, ctx) => {
      for (const problem of patchProblems(entry.patch, entry.target !== undefined)) {
        ctx.addIssue({ code: 'custom', message: problem.message, path: [problem.field] });
      }
    },
    { when: (payload) => isRecord(payload.value) && typeof payload.value.patch === 'string' },
  )
  .transform((entry): DeliveryPatch => ({
    patch: entry.patch,
    ...(entry.target !== undefined && { target: entry.target }),
  }));

/** An image reference without tag or digest (a registry port is fine: `localhost:5000/app`). */
const imageNameProblem: Check = (value) =>
  /\s/.test(value) || /[:@]/.test(value.slice(value.lastIndexOf('/') + 1))
    ? `"${value}" is not an image name: leave out the tag and digest (set newTag or digest for those)`
    : undefined;

const imageSchema = strict({
  name: checked(imageNameProblem),
  newName: checked(imageNameProblem).optional(),
  newTag: checked((tag) =>
    /[\s:@/]/.test(tag) ? `"${tag}" is not a tag (no spaces, ":", "@" or "/")` : undefined,
  ).optional(),
  digest: checked((digest) =>
    DIGEST_OF_ANY_ALGORITHM.test(digest)
      ? undefined
      : `"${digest}" is not a digest (e.g. sha256: followed by 64 lowercase hex digits)`,
  ).optional(),
})
  .superRefine(
    (image, ctx) => {
      if (image.newName === undefined && image.newTag === undefined && image.digest === undefined) {
        ctx.addIssue({ code: 'custom', message: 'set at least one of newName, newTag and digest' });
      }
    },
    { when: (payload) => isRecord(payload.value) },
  )
  .transform((image): ImageOverride => ({
    name: image.name,
    ...(image.newName !== undefined && { newName: image.newName }),
    ...(image.newTag !== undefined && { newTag: image.newTag }),
    ...(image.digest !== undefined && { digest: image.digest }),
  }));

export const imagesSchema = z.array(imageSchema).superRefine(
  (images, ctx) => {
    const first = new Map<unknown, number>();
    images.forEach((image, index) => {
      const imageName: unknown = isRecord(image) ? image.name : undefined;
      if (typeof imageName !== 'string') return;
      const earlier = first.get(imageName);
      if (earlier === undefined) first.set(imageName, index);
      else {
        ctx.addIssue({
          code: 'custom',
          message: `image "${imageName}" is listed more than once (also images[${earlier}])`,
          path: [index, 'name'],
        });
      }
    });
  },
  { when: (payload) => Array.isArray(payload.value) },
);

/** Flux's `decryption` with `provider: sops`: KMS key ARNs and/or an age identity secret. */
export const decryptionSchema = strict({
  provider: z.literal('sops', { error: 'the only provider is "sops"' }),
  kmsKeyArns: z
    .array(
      checked((arn) =>
        KMS_KEY_ARN.test(arn)
          ? undefined
          : `"${arn}" is not a KMS key ARN (arn:aws:kms:<region>:<account>:key/<key id>; not an alias: IAM grants kms:Decrypt on keys)`,
      ),
    )
    .optional(),
  ageKeySecretArn: checked((arn) =>
    SECRET_ARN.test(arn)
      ? undefined
      : `"${arn}" is not a Secrets Manager secret ARN (arn:aws:secretsmanager:<region>:<account>:secret:<name>)`,
  ).optional(),
  namespaces: z
    .array(name('namespace name'))
    .min(1, 'list at least one namespace, or leave namespaces out (then: targetNamespace, else default)')
    .optional(),
})
  .superRefine(
    (decryption, ctx) => {
      if ((decryption.kmsKeyArns ?? []).length === 0 && decryption.ageKeySecretArn === undefined)
        ctx.addIssue({
          code: 'custom',
          message: 'name the keys: kmsKeyArns (KMS key ARNs) and/or ageKeySecretArn (age identities)',
        });
    },
    { when: (payload) => isRecord(payload.value) },
  )
  .transform((decryption): Decryption => ({
    provider: decryption.provider,
    kmsKeyArns: decryption.kmsKeyArns ?? [],
    ...(decryption.ageKeySecretArn !== undefined && { ageKeySecretArn: decryption.ageKeySecretArn }),
    ...(decryption.namespaces !== undefined && { namespaces: decryption.namespaces }),
  }));
