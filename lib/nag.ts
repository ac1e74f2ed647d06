import { Stack, Validations } from 'aws-cdk-lib';
import type * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type { IConstruct } from 'constructs';

/** What the acknowledgements are about: each names the exact finding, and says why it stands. */
export interface NagFindings {
  readonly functions: readonly lambda.IFunction[];
  readonly deployerRole: iam.IRole;
  readonly gateRole: iam.IRole;
  /** The table is encrypted with a customer managed key. */
  readonly customerKey: boolean;
  /** `arn:…:schedule/<window group>/*` */
  readonly windowSchedulesArn: string;
  /** The failure queue: the dead-letter queue of every schedule and rule, and the functions' on-failure destination. */
  readonly failureQueue: IConstruct;
  /** Roles granted invoke on a function by a CDK L2 (which grants the function and its versions). */
  readonly invokers: readonly (readonly [iam.IRole, lambda.IFunction])[];
}

/**
 * A resource as cdk-nag names it in a finding id: references flattened to `<LogicalId.Attr>`
 * (cdk-nag's flattenCfnReference, for Ref, Fn::GetAtt and Fn::Join).
 */
export function nagResourceName(scope: IConstruct, value: string): string {
  const visit = (node: unknown): string => {
    if (node === undefined) return '';
    if (typeof node === 'string') return node.replace(/\$\{/g, '<').replace(/\}/g, '>');
    const fn = node as Record<string, unknown>;
    if (fn['Fn::Join']) {
      const [delimiter, items] = fn['Fn::Join'] as [string, unknown[]];
      return items.map(visit).join(delimiter);
    }
    if (fn['Fn::GetAtt']) {
      const [resource, attribute] = fn['Fn::GetAtt'] as [unknown, unknown];
      return `<${visit(resource)}.${visit(attribute)}>`;
    }
    if (fn.Ref) return `<${visit(fn.Ref)}>`;
    return JSON.stringify(node);
  };
  return visit(Stack.of(scope).resolve(value));
}

/** A rule of cdk-nag's AwsSolutions pack, as CDK validation plugins qualify rule ids. */
const rule = (id: string) => `AwsSolutions::AwsSolutions-${id}`;

/** Acknowledges the AwsSolutions findings that are by design, each with its reason. */
export function acknowledgeNagFindings(findings: NagFindings): void {
  for (const fn of findings.functions) {
    Validations.of(fn).acknowledge({
      id: rule('L1'),
      reason:
        'Node.js 22 (LTS) is the runtime the bundles target and the test suite runs; moving to a newer runtime is a tested change, not a default.',
    });
  }
  Validations.of(findings.deployerRole).acknowledge({
    id: rule('IAM5[Resource::*]'),
    reason:
      'ecr:GetAuthorizationToken has no resource to scope to; image reads are scoped to the named repositories. In a VPC, the network-interface actions a function needs (EC2 Describe actions take no resource scope) are the only others on *.',
  });
  Validations.of(findings.gateRole).acknowledge({
    id: rule(`IAM5[Resource::${nagResourceName(findings.gateRole, findings.windowSchedulesArn)}]`),
    reason:
      "The gate function creates one-time schedules named after the gate and the window's end at run time (and reads one whose name is taken); the grant is CreateSchedule and GetSchedule in sluice's one-time schedule group only.",
  });
  Validations.of(findings.deployerRole).acknowledge({
    id: rule(`IAM5[Resource::${nagResourceName(findings.deployerRole, findings.windowSchedulesArn)}]`),
    reason:
      "The reconcile function schedules the retry of a failed run (retryInterval) as a one-time schedule named after the delivery and the time at run time (and reads one whose name is taken); the grant is CreateSchedule and GetSchedule in sluice's one-time schedule group only.",
  });
  if (findings.customerKey) {
    for (const role of [findings.deployerRole, findings.gateRole]) {
      for (const action of ['kms:GenerateDataKey*', 'kms:ReEncrypt*']) {
        Validations.of(role).acknowledge({
          id: rule(`IAM5[Action::${action}]`),
          reason:
            "CDK's DynamoDB grant for a table with a customer managed key: the wildcard covers the key's data-key and re-encrypt variants, on that one key only.",
        });
      }
    }
  }
  Validations.of(findings.failureQueue).acknowledge({
    id: rule('SQS3'),
    reason:
      "It is the dead-letter queue: Scheduler's and EventBridge's dead-letter target and the functions' on-failure destination, read by people (its alarm fires on the first message); it has none of its own.",
  });
  for (const [role, fn] of findings.invokers) {
    Validations.of(role).acknowledge({
      id: rule(`IAM5[Resource::${nagResourceName(role, `${fn.functionArn}:*`)}]`),
      reason:
        "CDK's LambdaInvoke target and Provider grant invoke on one function and its versions (<arn>:*); sluice invokes the unqualified function only.",
    });
  }
}
