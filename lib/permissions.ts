import { Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type { Construct } from 'constructs';
import type { Delivery } from '../functions/core/config/index.ts';
import type { EcrRepository } from './sources.ts';
import type * as eks from 'aws-cdk-lib/aws-eks-v2';

/** What pulling an artifact from ECR takes, per repository (the registry API's manifest, blob and tag reads). */
export const ECR_PULL_ACTIONS = [
  'ecr:BatchCheckLayerAvailability',
  'ecr:BatchGetImage',
  'ecr:GetDownloadUrlForLayer',
  'ecr:ListImages',
];

/** ECR read on the named repositories; GetAuthorizationToken has no resource to scope to. */
export function ecrPullStatements(repositories: readonly EcrRepository[]): iam.PolicyStatement[] {
  if (repositories.length === 0) return [];
  return [
    new iam.PolicyStatement({
      actions: ECR_PULL_ACTIONS,
      resources: repositories.map((repository) => repository.repositoryArn),
    }),
    new iam.PolicyStatement({ actions: ['ecr:GetAuthorizationToken'], resources: ['*'] }),
  ];
}

/**
 * Reaching the deliveries' clusters: DescribeCluster on the ones reached with the function's own
 * credentials, AssumeRole on the roles named for the others (which then describe their cluster).
 */
export function clusterStatements(
  scope: Construct,
  deliveries: readonly Delivery[],
  clusters: ReadonlyMap<string, eks.ICluster>,
): iam.PolicyStatement[] {
  const clusterArns = new Set<string>();
  const roleArns = new Set<string>();
  for (const delivery of deliveries) {
    const imported = clusters.get(delivery.name);
    if (imported) {
      clusterArns.add(imported.clusterArn);
    } else if ('eks' in delivery.cluster) {
      const { name, region, roleArn } = delivery.cluster.eks;
      if (roleArn) roleArns.add(roleArn);
      else
        clusterArns.add(
          Stack.of(scope).formatArn({ service: 'eks', region, resource: 'cluster', resourceName: name }),
        );
    }
  }
  const statements: iam.PolicyStatement[] = [];
  if (clusterArns.size > 0)
    statements.push(
      new iam.PolicyStatement({ actions: ['eks:DescribeCluster'], resources: [...clusterArns] }),
    );
  if (roleArns.size > 0)
    statements.push(
      new iam.PolicyStatement({ actions: ['sts:AssumeRole'], resources: [...roleArns].sort() }),
    );
  return statements;
}

/** Invoking a function by its unqualified ARN (what sluice does), and nothing else. */
export function invokeStatement(functionArn: string): iam.PolicyStatement {
  return new iam.PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: [functionArn] });
}
