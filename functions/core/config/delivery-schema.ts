// One delivery: its fields, defaults filled in, normalised to the Delivery type.
import * as z from 'zod';
import { DEFAULTS, MAX_CLUSTER_CONCURRENCY } from './defaults.ts';
import type { Delivery } from './types.ts';
import {
  LABEL_VALUE,
  VARIABLE,
  checked,
  duration,
  name,
  qualifiedNameProblem,
  strict,
  stringMap,
} from './fields.ts';
import { healthCheckExprsSchema } from './health-schemas.ts';
import { dependsOnSchema, gateRefsSchema, pruneLimitSchema } from './hold-schemas.ts';
import { decryptionSchema, imagesSchema, patchSchema, pathSchema } from './manifest-schemas.ts';
import { sourceSchema } from './source-schema.ts';
import {
  clusterSchema,
  impersonateSchema,
  impersonationOf,
  serviceAccountNameProblem,
} from './target-schemas.ts';

export const deliverySchema = strict({
  name: name('delivery name'),
  source: sourceSchema,
  path: pathSchema.optional(),
  prune: z.boolean().optional(),
  interval: duration().optional(),
  retryInterval: duration().optional(),
  timeout: duration().optional(),
  wait: z.boolean().optional(),
  suspend: z.boolean().optional(),
  cluster: clusterSchema,
  gates: gateRefsSchema.optional(),
  dependsOn: dependsOnSchema.optional(),
  deletionPolicy: z.enum(['Delete', 'Orphan']).optional(),
  allowEmpty: z.boolean().optional(),
  targetNamespace: name('namespace name').optional(),
  commonMetadata: strict({
    labels: stringMap(qualifiedNameProblem('label key'), (value) =>
      value.length <= 63 && LABEL_VALUE.test(value)
        ? undefined
        : `"${value}" is not a valid label value (at most 63 letters, digits, "-", "_" or ".", starting and ending with a letter or digit)`,
    ).optional(),
    annotations: stringMap(qualifiedNameProblem('annotation key')).optional(),
  }).optional(),
  postBuild: strict({
    substitute: stringMap((key) =>
      VARIABLE.test(key)
        ? undefined
        : `"${key}" is not a valid variable name (letters, digits and "_", not starting with a digit)`,
    ).optional(),
  }).optional(),
  patches: z.array(patchSchema).optional(),
  images: imagesSchema.optional(),
  pruneLimit: pruneLimitSchema.optional(),
  pruneLimitGate: name('gate name').optional(),
  clusterConcurrency: z
    .number()
    .int('must be a whole number')
    .min(1, 'must be at least 1')
    .max(MAX_CLUSTER_CONCURRENCY, `must be at most ${MAX_CLUSTER_CONCURRENCY}`)
    .optional(),
  serviceAccountName: checked(serviceAccountNameProblem).optional(),
  impersonate: impersonateSchema.optional(),
  healthCheckExprs: healthCheckExprsSchema.optional(),
  decryption: decryptionSchema.optional(),
}).transform((input, ctx): Delivery => {
  const namespaces = input.decryption?.namespaces;
  if (namespaces && input.targetNamespace !== undefined && !namespaces.includes(input.targetNamespace))
    ctx.addIssue({
      code: 'custom',
      path: ['decryption', 'namespaces'],
      message: `does not list the targetNamespace "${input.targetNamespace}", where every Secret of the delivery lands: list it, or leave namespaces out`,
    });
  const prune = input.prune ?? DEFAULTS.prune;
  const impersonate = impersonationOf(input, ctx);
  return {
    name: input.name,
    source: input.source,
    path: input.path ?? DEFAULTS.path,
    prune,
    intervalMs: input.interval ?? DEFAULTS.intervalMs,
    ...(input.retryInterval !== undefined && { retryIntervalMs: input.retryInterval }),
    timeoutMs: input.timeout ?? DEFAULTS.timeoutMs,
    wait: input.wait ?? DEFAULTS.wait,
    suspend: input.suspend ?? DEFAULTS.suspend,
    cluster: input.cluster,
    gates: input.gates ?? [],
    dependsOn: input.dependsOn ?? [],
    deletionPolicy: input.deletionPolicy ?? DEFAULTS.deletionPolicy(prune),
    allowEmpty: input.allowEmpty ?? DEFAULTS.allowEmpty,
    ...(input.targetNamespace !== undefined && { targetNamespace: input.targetNamespace }),
    ...(input.commonMetadata !== undefined && { commonMetadata: input.commonMetadata }),
    ...(input.postBuild !== undefined && { postBuild: input.postBuild }),
    ...(input.patches !== undefined && { patches: input.patches }),
    ...(input.images !== undefined && { images: input.images }),
    ...(input.pruneLimit !== undefined && { pruneLimit: input.pruneLimit }),
    ...(input.pruneLimitGate !== undefined && { pruneLimitGate: input.pruneLimitGate }),
    ...(input.clusterConcurrency !== undefined && { clusterConcurrency: input.clusterConcurrency }),
    ...(impersonate !== undefined && { impersonate }),
    ...(input.healthCheckExprs !== undefined && { healthCheckExprs: input.healthCheckExprs }),
    ...(input.decryption !== undefined && { decryption: input.decryption }),
  };
});
