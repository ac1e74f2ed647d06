// Where a delivery applies and as whom: its cluster, and impersonation.
import * as z from 'zod';
import { isRecord } from './issues.ts';
import type { ClusterTarget, Impersonation } from './types.ts';
import {
  AWS_REGION,
  type Check,
  DNS_SUBDOMAIN,
  EKS_NAME,
  ROLE_ARN,
  checked,
  name,
  strict,
} from './fields.ts';

export const clusterSchema = strict({
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

export const serviceAccountNameProblem: Check = (value) =>
  value.length <= 253 && DNS_SUBDOMAIN.test(value)
    ? undefined
    : `"${value}" is not a valid service account name (lowercase letters, digits, "-" and ".")`;

/** Who the delivery acts as in its cluster: a service account or a user, through impersonation. */
export const impersonateSchema = strict({
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
export function impersonationOf(
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
