import { Names } from 'aws-cdk-lib';
import * as eks from 'aws-cdk-lib/aws-eks-v2';
import type * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';

export interface ClusterAccessProps {
  readonly clusters: Iterable<eks.ICluster>;
  /** The principal that applies and prunes: the reconcile (and spec) functions' role. */
  readonly role: iam.IRole;
  /** @default - AmazonEKSClusterAdminPolicy, cluster scope */
  readonly accessPolicies?: eks.IAccessPolicy[];
}

export function clusterAdminPolicy(): eks.IAccessPolicy {
  return eks.AccessPolicy.fromAccessPolicyName('AmazonEKSClusterAdminPolicy', {
    accessScopeType: eks.AccessScopeType.CLUSTER,
  });
}

/**
 * An EKS access entry per cluster for the role that applies and prunes (the cluster's
 * authentication mode must be API or API_AND_CONFIG_MAP).
 */
export class ClusterAccess extends Construct {
  readonly entries: eks.AccessEntry[] = [];

  constructor(scope: Construct, id: string, props: ClusterAccessProps) {
    super(scope, id);
    const seen = new Set<eks.ICluster>();
    for (const cluster of props.clusters) {
      if (seen.has(cluster)) continue;
      seen.add(cluster);
      this.entries.push(
        new eks.AccessEntry(this, Names.uniqueId(cluster), {
          cluster,
          principal: props.role.roleArn,
          accessPolicies: props.accessPolicies ?? [clusterAdminPolicy()],
        }),
      );
    }
  }
}
