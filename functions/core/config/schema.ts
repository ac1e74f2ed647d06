/**
 * The one zod schema for gates and deliveries, shared by the CLI config file and the CDK construct
 * props. Input durations are strings (`5m`); output is the normalised types in types.ts.
 */
import { posix } from 'node:path';
import semver from 'semver';
import * as z from 'zod';
import { cronProblem, timeZoneProblem, unwrapCron } from './cron.ts';
import { DEFAULTS, MAX_APPROVERS, MAX_CLUSTER_CONCURRENCY, MAX_WINDOW_MS } from './defaults.ts';
import { clusterKey } from './cluster-key.ts';
import { DURATION_HINT, formatDuration, parseDuration } from './duration.ts';
import { closest, isRecord } from './issues.ts';
import { isEcrHost } from '../oci/ecr-host.ts';
import { publicKeyProblem } from '../oci/verify.ts';
import { patchProblems } from './patches.ts';
import type {
  ClusterTarget,
  Decryption,
  Delivery,
  DeliveryPatch,
  DeliverySource,
  Gate,
  GateRef,
  GateSchedule,
  HealthCheckExpr,
  ImageOverride,
  Impersonation,
  PruneLimit,
  SluiceConfig,
} from './types.ts';

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const REGISTRY_HOST = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?)(?::\d{1,5})?$/;
const OCI_REPOSITORY = /^[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*(?:\/[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*)*$/;
const OCI_TAG = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/;
const DIGEST = /^sha256:[a-f0-9]{64}$/;
const DIGEST_OF_ANY_ALGORITHM = /^[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[a-zA-Z0-9=_-]{32,}$/;
const MEDIA_TYPE = /^[\w.+-]+\/[\w.+-]+$/;
const EKS_NAME = /^[0-9A-Za-z][A-Za-z0-9_-]{0,99}$/;
const AWS_REGION = /^[a-z]{2}(?:-[a-z]+)+-\d+$/;
const ROLE_ARN = /^arn:aws(?:-[a-z]+)*:iam::\d{12}:role\/[\w+=,.@/-]{1,512}$/;
const VARIABLE = /^[_a-zA-Z][_a-zA-Z0-9]*$/;
const API_VERSION =
  /^(?:[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*\/)?[a-z0-9](?:[-a-z0-9]*[a-z0-9])?$/;
const KIND = /^[A-Za-z](?:[-A-Za-z0-9]*[A-Za-z0-9])?$/;
const KMS_KEY_ARN = /^arn:aws(?:-[a-z]+)*:kms:[a-z]{2}(?:-[a-z]+)+-\d+:\d{12}:key\/[A-Za-z0-9-]{1,128}$/;
const SECRET_ARN =
  /^arn:aws(?:-[a-z]+)*:secretsmanager:[a-z]{2}(?:-[a-z]+)+-\d+:\d{12}:secret:[\w/+=.@-]{1,512}$/;

/** `aws` for an ECR registry host, else `generic`. */
export function defaultProvider(url: string): 'aws' | 'generic' {
  const host = url.replace(/^oci:\/\//, '').split('/')[0]!;
  return isEcrHost(host) ? 'aws' : 'generic';
}

/** `a`, `a and b`, `a, b and c` */
function listing(items: readonly string[]): string {
  return items.length <= 1 ? items.join('') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;
}

type Check = (value: string) => string | undefined;

/** A non-empty string that passes `check` (which returns a problem, or undefined). */
function checked(check: Check = () => undefined) {
  return z.string().superRefine((value, ctx) => {
    const problem = value === '' ? 'must not be empty' : check(value);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });
}

/** A strict object whose unknown-field errors suggest the nearest known field. */
function strict<T extends z.core.$ZodLooseShape>(shape: T) {
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
function duration() {
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

const name = (what: string) => checked(labelProblem(what));

function qualifiedNameProblem(what: string): Check {
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
function stringMap(keyProblem: Check, valueProblem?: Check) {
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

const sourceSchema = strict({
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
  verify: strict({
    provider: z.literal('cosign', { error: 'the only provider is "cosign"' }),
    publicKeys: z
      .array(checked(publicKeyProblem))
      .min(1, { error: 'name at least one public key (PEM, as cosign.pub)' }),
  }).optional(),
})
  .superRefine(
    (source, ctx) => {
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
    ...(source.verify !== undefined && { verify: source.verify }),
  }));

const pathSchema = checked((path) => {
  if (path.startsWith('/')) return `"${path}" must be relative to the artifact root (no leading "/")`;
  if (path.split('/').includes('..')) return `"${path}" must not contain ".."`;
  return undefined;
}).transform((path) => posix.normalize(path).replace(/(.)\/+$/, '$1'));

const clusterSchema = strict({
  eks: strict({
    name: checked((value) =>
      EKS_NAME.test(value)
        ? undefined
        : `"${value}" is not an EKS cluster name (at most 100 letters, digits, "-" and "_", starting with a letter or digit)`,
    ),
    region: checked((value) =>
      AWS_REGION.test(value) ? undefined : `"${value}" is not an AWS region (e.g. eu-west-1)`,
    ),
    roleArn: checked((value) =>
      ROLE_ARN.test(value)
        ? undefined
        : `"${value}" is not an IAM role ARN (e.g. arn:aws:iam::123456789012:role/sluice-deployer)`,
    ).optional(),
  }).optional(),
  kubeconfig: checked().optional(),
  context: checked().optional(),
})
  .superRefine(
    (cluster, ctx) => {
      const eks = cluster.eks !== undefined;
      const kubeconfig = cluster.kubeconfig !== undefined;
      if (eks && kubeconfig)
        ctx.addIssue({ code: 'custom', message: 'set either eks or kubeconfig, not both' });
      if (!eks && !kubeconfig) {
        ctx.addIssue({
          code: 'custom',
          message: 'set either eks: { name, region } or kubeconfig: <path to a kubeconfig file>',
        });
      }
      if (cluster.context !== undefined && !kubeconfig) {
        ctx.addIssue({ code: 'custom', message: 'only applies with kubeconfig', path: ['context'] });
      }
    },
    { when: (payload) => isRecord(payload.value) },
  )
  .transform((cluster): ClusterTarget =>
    cluster.eks
      ? {
          eks: {
            name: cluster.eks.name,
            region: cluster.eks.region,
            ...(cluster.eks.roleArn !== undefined && { roleArn: cluster.eks.roleArn }),
          },
        }
      : {
          kubeconfig: cluster.kubeconfig!,
          ...(cluster.context !== undefined && { context: cluster.context }),
        },
  );

const gateRefsSchema = z
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

const patchSchema = strict({
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

const imagesSchema = z.array(imageSchema).superRefine(
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
const healthCheckExprsSchema = z.array(healthCheckExprSchema).superRefine(
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

const PRUNE_LIMIT_HINT = 'use a share of the inventory like "50%" or a number of objects like 20';

/** `"50%"` (a share of the inventory) or `20` / `"20"` (a number of objects). */
const pruneLimitSchema = z.union([z.number(), z.string()]).transform((value, ctx): PruneLimit => {
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

const serviceAccountNameProblem: Check = (value) =>
  value.length <= 253 && DNS_SUBDOMAIN.test(value)
    ? undefined
    : `"${value}" is not a valid service account name (lowercase letters, digits, "-" and ".")`;

/** Who the delivery acts as in its cluster: a service account or a user, through impersonation. */
const impersonateSchema = strict({
  serviceAccount: strict({
    name: checked(serviceAccountNameProblem),
    namespace: name('namespace name').optional(),
  }).optional(),
  user: checked().optional(),
}).superRefine(
  (value, ctx) => {
    if ((value.serviceAccount === undefined) === (value.user === undefined))
      ctx.addIssue({
        code: 'custom',
        message: 'set exactly one of serviceAccount: { name, namespace } and user',
      });
  },
  { when: (payload) => isRecord(payload.value) },
);

/**
 * `serviceAccountName` (Flux's field: a service account in `targetNamespace`) or `impersonate`,
 * as one normalised identity; undefined when the delivery uses sluice's own.
 */
function impersonationOf(
  input: {
    serviceAccountName?: string;
    impersonate?: z.output<typeof impersonateSchema>;
    targetNamespace?: string;
  },
  ctx: z.core.$RefinementCtx,
): Impersonation | undefined {
  const { serviceAccountName, impersonate, targetNamespace } = input;
  if (serviceAccountName !== undefined && impersonate !== undefined) {
    ctx.addIssue({
      code: 'custom',
      message: 'set either serviceAccountName or impersonate, not both',
      path: ['impersonate'],
    });
    return undefined;
  }
  if (impersonate?.user !== undefined) return { user: impersonate.user };
  const account = impersonate?.serviceAccount ?? (serviceAccountName && { name: serviceAccountName });
  if (!account) return undefined;
  const namespace = account.namespace ?? targetNamespace;
  if (namespace === undefined) {
    ctx.addIssue({
      code: 'custom',
      message: `the service account "${account.name}" needs a namespace: set targetNamespace, or impersonate: { serviceAccount: { name, namespace } }`,
      path: serviceAccountName !== undefined ? ['serviceAccountName'] : ['impersonate', 'serviceAccount'],
    });
    return undefined;
  }
  return { serviceAccount: { name: account.name, namespace } };
}

/** Flux's `decryption` with `provider: sops`: KMS key ARNs and/or an age identity secret. */
const decryptionSchema = strict({
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
  }));

/** Delivery names, each once; `{ name }` objects (Flux's form) are accepted too. */
const dependsOnSchema = z
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

const scheduleSchema = strict({
  cron: checked((expression) => cronProblem(expression)).transform(unwrapCron),
  timeZone: checked(timeZoneProblem).optional(),
  action: z.enum(['open', 'close']),
  window: gateWindow().optional(),
}).transform((schedule): GateSchedule => ({
  cron: schedule.cron,
  timeZone: schedule.timeZone ?? DEFAULTS.timeZone,
  action: schedule.action,
  ...(schedule.window !== undefined && { windowMs: schedule.window }),
}));

export const gateSchema = strict({
  name: name('gate name'),
  default: z.enum(['open', 'closed']),
  window: gateWindow().optional(),
  description: z.string().optional(),
  schedules: z.array(scheduleSchema).optional(),
  approval: z.enum(['any', 'revision']).optional(),
  approvers: z
    .number()
    .int('must be a whole number')
    .min(1, 'must be at least 1')
    .max(MAX_APPROVERS, `must be at most ${MAX_APPROVERS}`)
    .optional(),
})
  .superRefine((gate, ctx) => {
    const rule =
      gate.approval === 'revision'
        ? 'approval: revision'
        : (gate.approvers ?? 1) > 1
          ? `approvers: ${gate.approvers}`
          : undefined;
    if (!rule) return;
    if (gate.default === 'open')
      ctx.addIssue({
        code: 'custom',
        path: ['default'],
        message: `a gate with ${rule} must be closed by default: open by default, it would let everything through unapproved`,
      });
    gate.schedules?.forEach((schedule, index) => {
      if (schedule.action === 'open')
        ctx.addIssue({
          code: 'custom',
          path: ['schedules', index, 'action'],
          message: `a gate with ${rule} cannot have open schedules: a schedule approves nothing`,
        });
    });
  })
  .transform((gate): Gate => ({
    name: gate.name,
    default: gate.default,
    ...(gate.window !== undefined && { windowMs: gate.window }),
    ...(gate.description !== undefined && { description: gate.description }),
    schedules: gate.schedules ?? [],
    approval: gate.approval ?? DEFAULTS.approval,
    approvers: gate.approvers ?? DEFAULTS.approvers,
  }));

/** A gate or schedule window: a duration of at most MAX_WINDOW_MS. */
function gateWindow() {
  return duration().refine((ms) => ms <= MAX_WINDOW_MS, {
    message: `must be at most ${formatDuration(MAX_WINDOW_MS)} (a year): a request lasting longer is a mistake`,
  });
}

/** Names used twice, unknown gate references: checked on whatever parsed, so they are reported with the rest. */
function crossCheck(config: Record<string, unknown>, ctx: z.core.$RefinementCtx): void {
  const gates = Array.isArray(config.gates) ? (config.gates as unknown[]) : [];
  const deliveries = Array.isArray(config.deliveries) ? (config.deliveries as unknown[]) : [];
  const nameOf = (item: unknown) => (isRecord(item) && typeof item.name === 'string' ? item.name : undefined);

  for (const [field, list] of [
    ['gates', gates],
    ['deliveries', deliveries],
  ] as const) {
    const first = new Map<string, number>();
    list.forEach((item, index) => {
      const itemName = nameOf(item);
      if (itemName === undefined) return;
      const earlier = first.get(itemName);
      if (earlier === undefined) first.set(itemName, index);
      else {
        const what = field === 'gates' ? 'gate' : 'delivery';
        ctx.addIssue({
          code: 'custom',
          message: `duplicate ${what} name "${itemName}" (also ${field}[${earlier}])`,
          path: [field, index, 'name'],
        });
      }
    });
  }

  if (config.gates !== undefined && !Array.isArray(config.gates)) return;
  const defined = new Set(gates.map(nameOf).filter((gateName) => gateName !== undefined));
  deliveries.forEach((delivery, index) => {
    if (!isRecord(delivery)) return;
    const deliveryName = nameOf(delivery);
    const check = (gateName: string | undefined, path: (string | number)[]) => {
      if (gateName === undefined || defined.has(gateName)) return;
      const near = closest(gateName, defined);
      const who = deliveryName === undefined ? 'references' : `delivery "${deliveryName}" references`;
      const where = defined.size === 0 ? 'no gates are defined' : `defined: ${[...defined].join(', ')}`;
      ctx.addIssue({
        code: 'custom',
        message: `${who} gate "${gateName}", which is not defined in gates (${near ? `did you mean "${near}"? ` : ''}${where})`,
        path: ['deliveries', index, ...path],
      });
    };
    if (Array.isArray(delivery.gates))
      delivery.gates.forEach((ref: unknown, refIndex: number) =>
        check(nameOf(ref), ['gates', refIndex, 'name']),
      );
    if (typeof delivery.pruneLimitGate === 'string') check(delivery.pruneLimitGate, ['pruneLimitGate']);
  });
  checkDependencies(deliveries, ctx);
  checkClusterConcurrency(deliveries, ctx);
}

/** Deliveries on one cluster agree on its clusterConcurrency (an unset one counts as the default). */
function checkClusterConcurrency(deliveries: readonly unknown[], ctx: z.RefinementCtx): void {
  const first = new Map<string, { name: unknown; concurrency: number; set: boolean }>();
  deliveries.forEach((delivery, index) => {
    if (!isRecord(delivery) || !isRecord(delivery.cluster)) return;
    const cluster = delivery.cluster as Record<string, unknown>;
    const eks = isRecord(cluster.eks) ? (cluster.eks as Record<string, unknown>) : undefined;
    const target =
      eks && typeof eks.name === 'string' && typeof eks.region === 'string'
        ? { eks: { name: eks.name, region: eks.region, roleArn: eks.roleArn as string | undefined } }
        : typeof cluster.kubeconfig === 'string'
          ? { kubeconfig: cluster.kubeconfig, context: cluster.context as string | undefined }
          : undefined;
    if (!target) return;
    const key = clusterKey(target);
    const set = typeof delivery.clusterConcurrency === 'number';
    const concurrency = set ? (delivery.clusterConcurrency as number) : DEFAULTS.clusterConcurrency;
    const seen = first.get(key);
    if (!seen) {
      first.set(key, { name: delivery.name, concurrency, set });
      return;
    }
    if (seen.concurrency === concurrency) return;
    const said = (c: number, explicit: boolean) => (explicit ? `${c}` : `${c}, the default`);
    ctx.addIssue({
      code: 'custom',
      message: `clusterConcurrency ${said(concurrency, set)} differs from delivery "${String(seen.name)}" on the same cluster (${said(seen.concurrency, seen.set)}): deliveries on one cluster share its limit, so set the same value on each`,
      path: ['deliveries', index, 'clusterConcurrency'],
    });
  });
}

/** The `dependsOn` names of a delivery as written (`name` or `{ name }`). */
function dependencyNames(delivery: unknown): (string | undefined)[] {
  if (!isRecord(delivery) || !Array.isArray(delivery.dependsOn)) return [];
  return delivery.dependsOn.map((ref: unknown) =>
    typeof ref === 'string' ? ref : isRecord(ref) && typeof ref.name === 'string' ? ref.name : undefined,
  );
}

/** Every `dependsOn` names another delivery of the config, and following them never comes back. */
function checkDependencies(deliveries: readonly unknown[], ctx: z.RefinementCtx): void {
  const nameOf = (item: unknown) => (isRecord(item) && typeof item.name === 'string' ? item.name : undefined);
  const defined = new Set(deliveries.map(nameOf).filter((n) => n !== undefined));
  const edges = new Map<string, string[]>();
  deliveries.forEach((delivery, index) => {
    const own = nameOf(delivery);
    const names = dependencyNames(delivery);
    names.forEach((dependency, refIndex) => {
      if (dependency === undefined) return;
      const path = ['deliveries', index, 'dependsOn', refIndex];
      if (dependency === own) {
        ctx.addIssue({ code: 'custom', message: `delivery "${own}" cannot depend on itself`, path });
      } else if (!defined.has(dependency)) {
        const near = closest(dependency, defined);
        ctx.addIssue({
          code: 'custom',
          message: `delivery "${own ?? index}" depends on "${dependency}", which is not defined in deliveries${near ? ` (did you mean "${near}"?)` : ''}`,
          path,
        });
      }
    });
    if (own !== undefined)
      edges.set(
        own,
        names.filter((n): n is string => n !== undefined && n !== own && defined.has(n)),
      );
  });
  const cycle = findCycle(edges);
  if (cycle) {
    const index = deliveries.findIndex((d) => nameOf(d) === cycle[0]);
    ctx.addIssue({
      code: 'custom',
      message: `dependsOn forms a cycle: ${cycle.join(' → ')}`,
      path: ['deliveries', index, 'dependsOn'],
    });
  }
}

/** A path that returns to where it started (`a → b → a`), if the graph has one. */
function findCycle(edges: ReadonlyMap<string, readonly string[]>): string[] | undefined {
  const done = new Set<string>();
  const visit = (node: string, path: string[]): string[] | undefined => {
    const seen = path.indexOf(node);
    if (seen !== -1) return [...path.slice(seen), node];
    if (done.has(node)) return undefined;
    for (const next of edges.get(node) ?? []) {
      const cycle = visit(next, [...path, node]);
      if (cycle) return cycle;
    }
    done.add(node);
    return undefined;
  };
  for (const node of edges.keys()) {
    const cycle = visit(node, []);
    if (cycle) return cycle;
  }
  return undefined;
}

export const configSchema = strict({
  gates: z.array(gateSchema).optional(),
  deliveries: z.array(deliverySchema).optional(),
})
  .superRefine((config, ctx) => crossCheck(config, ctx), { when: (payload) => isRecord(payload.value) })
  .transform((config): SluiceConfig => ({ gates: config.gates ?? [], deliveries: config.deliveries ?? [] }));

/** What a config file or construct props may hold (durations as strings). */
export type ConfigInput = z.input<typeof configSchema>;
export type DeliveryInput = z.input<typeof deliverySchema>;
export type GateInput = z.input<typeof gateSchema>;
