import { Names, Token } from 'aws-cdk-lib';
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
 * What names a cluster: its name and region. The same cluster imported twice is two constructs,
 * but EKS takes one access entry per principal. A cluster whose name or region is a token (made
 * in this app, an environment-agnostic stack) is known only by its construct.
 */
export function clusterKey(cluster: eks.ICluster): string {
  const { clusterName } = cluster;
  const { region } = cluster.env;
  if (Token.isUnresolved(clusterName) || Token.isUnresolved(region)) return `construct:${cluster.node.path}`;
  return `${clusterName}@${region}`;
}

/**
 * An EKS access entry per cluster (by name and region) for the role that applies and prunes (the
 * cluster's authentication mode must be API or API_AND_CONFIG_MAP).
 */
export class ClusterAccess extends Construct {
  readonly entries: eks.AccessEntry[] = [];

  constructor(scope: Construct, id: string, props: ClusterAccessProps) {
    super(scope, id);
    const seen = new Set<string>();
    for (const cluster of props.clusters) {
      const key = clusterKey(cluster);
      if (seen.has(key)) continue;
      seen.add(key);
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
