import { Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type { Construct } from 'constructs';
import type { Delivery, DeliverySource, Gate } from '../functions/core/config/index.ts';
import type { EcrRepository } from './sources.ts';
import type * as eks from 'aws-cdk-lib/aws-eks-v2';

/** What pulling an artifact from ECR takes, per repository: the registry API's manifest, blob and tag reads. */
export const ECR_PULL_ACTIONS = ['ecr:BatchGetImage', 'ecr:GetDownloadUrlForLayer', 'ecr:ListImages'];

/**
 * What the functions do to the table, and nothing more: item reads and writes, queries of one
 * partition, batch deletes of inventory chunks, and the condition checks of transactions (no
 * Scan, no BatchGetItem, no stream reads, no table management).
 */
export const TABLE_ACTIONS = [
  'dynamodb:GetItem',
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
  'dynamodb:Query',
  'dynamodb:BatchWriteItem',
  'dynamodb:ConditionCheckItem',
];

/** TABLE_ACTIONS on the table, and the use of its customer managed key when it has one. */
export function grantTableUse(table: dynamodb.ITableV2, role: iam.IRole): void {
  role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: TABLE_ACTIONS, resources: [table.tableArn] }));
  table.encryptionKey?.grantEncryptDecrypt(role);
}

/**
 * The network-interface actions a function in a VPC needs (those of AWSLambdaVPCAccessExecutionRole
 * without its log writes on every log group: each function writes only to its own). EC2's
 * Describe actions take no resource scope.
 */
export const VPC_ACCESS_STATEMENT = (): iam.PolicyStatement =>
  new iam.PolicyStatement({
    actions: [
      'ec2:CreateNetworkInterface',
      'ec2:DescribeNetworkInterfaces',
      'ec2:DescribeSubnets',
      'ec2:DeleteNetworkInterface',
      'ec2:AssignPrivateIpAddresses',
      'ec2:UnassignPrivateIpAddresses',
    ],
    resources: ['*'],
  });

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

/**
 * SOPS decryption: `kms:Decrypt` on exactly the KMS keys the deliveries name (the encryption context
 * a file was encrypted under is checked by KMS itself, as sluice passes it on), and
 * `secretsmanager:GetSecretValue` on exactly their age identity secrets.
 */
export function decryptionStatements(deliveries: readonly Delivery[]): iam.PolicyStatement[] {
  const keys = new Set(deliveries.flatMap((d) => d.decryption?.kmsKeyArns ?? []));
  const secrets = new Set(deliveries.flatMap((d) => d.decryption?.ageKeySecretArn ?? []));
  return [
    ...(keys.size > 0
      ? [new iam.PolicyStatement({ actions: ['kms:Decrypt'], resources: [...keys].sort() })]
      : []),
    ...(secrets.size > 0
      ? [
          new iam.PolicyStatement({
            actions: ['secretsmanager:GetSecretValue'],
            resources: [...secrets].sort(),
          }),
        ]
      : []),
  ];
}

/**
 * cosign verification against KMS keys: `kms:GetPublicKey` on exactly the keys the deliveries' and
 * rollouts' `verify.kmsKeyArn` name (the reconcile function reads each key's public half, in the
 * key's own Region), and nothing else of KMS.
 */
export function signatureKeyStatements(
  sources: readonly { readonly verify?: DeliverySource['verify'] }[],
): iam.PolicyStatement[] {
  const keys = new Set(
    sources.flatMap((source) =>
      source.verify && 'kmsKeyArn' in source.verify ? [source.verify.kmsKeyArn] : [],
    ),
  );
  return keys.size > 0
    ? [new iam.PolicyStatement({ actions: ['kms:GetPublicKey'], resources: [...keys].sort() })]
    : [];
}

/**
 * AWS Signer revocation checks: `signer:GetRevocationStatus` when a delivery's or rollout's
 * `verify.awsSigner` trusts AWS Signer signatures, and nothing otherwise. The action names no
 * resource (IAM grants it on `*`): what is checked is the signature's own profile version and job.
 */
export function signerRevocationStatements(
  sources: readonly { readonly verify?: DeliverySource['verify'] }[],
): iam.PolicyStatement[] {
  return sources.some((source) => source.verify && 'awsSigner' in source.verify)
    ? [new iam.PolicyStatement({ actions: ['signer:GetRevocationStatus'], resources: ['*'] })]
    : [];
}

/**
 * `ssm:GetCalendarState` on exactly the Change Calendars the gates name (a name is a document of
 * this stack's account and region; an ARN, one shared from another account, as it is).
 */
export function changeCalendarStatements(scope: Construct, gates: readonly Gate[]): iam.PolicyStatement[] {
  const stack = Stack.of(scope);
  const calendars = new Set(
    gates
      .flatMap((gate) => gate.changeCalendars ?? [])
      .map((calendar) =>
        calendar.startsWith('arn:')
          ? calendar
          : stack.formatArn({ service: 'ssm', resource: 'document', resourceName: calendar }),
      ),
  );
  return calendars.size > 0
    ? [new iam.PolicyStatement({ actions: ['ssm:GetCalendarState'], resources: [...calendars].sort() })]
    : [];
}

/**
 * `s3:GetObject` on exactly the objects the gates' live calendars name (`calendars[].s3`): the
 * functions that evaluate gates read them, and nothing else of their buckets.
 */
export function calendarObjectStatements(scope: Construct, gates: readonly Gate[]): iam.PolicyStatement[] {
  const stack = Stack.of(scope);
  const objects = new Set(
    gates.flatMap((gate) =>
      (gate.calendars ?? []).flatMap((calendar) =>
        'source' in calendar && 's3' in calendar.source
          ? [
              stack.formatArn({
                service: 's3',
                region: '',
                account: '',
                resource: calendar.source.s3.bucket,
                resourceName: calendar.source.s3.key,
              }),
            ]
          : [],
      ),
    ),
  );
  return objects.size > 0
    ? [new iam.PolicyStatement({ actions: ['s3:GetObject'], resources: [...objects].sort() })]
    : [];
}
