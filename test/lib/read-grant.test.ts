// grantRead: exactly what the CLI's reading commands read (status, gates, gate history, rollout
// status, diff, --stack), on exactly this Sluice's resources, and nothing that writes.
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import { Duration } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { ACCOUNT, REGION, REPOSITORY_ARN, SEED_GATES, seedDelivery, synth } from './synth.ts';

type Statement = { Action: string | string[]; Resource: unknown; Effect: string };

/** The statements of the policies attached to the role `Operators`, resolved. */
function operatorStatements(template: { toJSON(): Record<string, unknown> }): Statement[] {
  const resources = template.toJSON().Resources as Record<
    string,
    { Type: string; Properties: { Roles?: { Ref: string }[]; PolicyDocument?: { Statement: Statement[] } } }
  >;
  const role = Object.keys(resources).find(
    (id) => id.startsWith('Operators') && resources[id]!.Type === 'AWS::IAM::Role',
  )!;
  return Object.values(resources)
    .filter((r) => r.Type === 'AWS::IAM::Policy' && r.Properties.Roles?.some((ref) => ref.Ref === role))
    .flatMap((r) => r.Properties.PolicyDocument!.Statement);
}

const actionsOf = (statements: Statement[]) =>
  statements.flatMap((s) => (Array.isArray(s.Action) ? s.Action : [s.Action])).sort();

describe('grantRead', () => {
  const { template } = synth(
    (cluster) => ({
      gates: [
        ...SEED_GATES,
        {
          name: 'shop-healthy',
          default: 'open',
          window: Duration.hours(1),
          alarms: ['shop-5xx'],
          changeCalendars: ['holiday-freeze'],
        },
      ],
      deliveries: [{ ...seedDelivery(cluster), gates: [{ name: 'shop-healthy' }] }],
    }),
    {
      nag: true,
      then: (sluice, stack) => {
        sluice.grantRead(new iam.Role(stack, 'Operators', { assumedBy: new iam.AccountRootPrincipal() }));
      },
    },
  );
  const statements = operatorStatements(template);

  it('reads the table (items, queries, batches), the alarms, the calendars, the stack, ECR and the cluster: no more', () => {
    expect(actionsOf(statements)).toEqual(
      [
        'cloudformation:DescribeStacks',
        'cloudwatch:DescribeAlarms',
        'dynamodb:BatchGetItem',
        'dynamodb:GetItem',
        'dynamodb:Query',
        'ecr:BatchGetImage',
        'ecr:GetAuthorizationToken',
        'ecr:GetDownloadUrlForLayer',
        'ecr:ListImages',
        'eks:DescribeCluster',
        'ssm:GetCalendarState',
      ].sort(),
    );
    for (const statement of statements) expect(statement.Effect).toBe('Allow');
    // Nothing that writes or invokes: no Put/Update/Delete, no lambda:*, no Scan of other tables.
    expect(actionsOf(statements).filter((a) => /Put|Update|Delete|Write|Invoke|Scan|Create/.test(a))).toEqual(
      [],
    );
  });

  it('each on exactly its resources: the table, this stack (its id), the named alarm and calendar, the repository', () => {
    const by = (action: string) => statements.find((s) => [s.Action].flat().includes(action))!;
    expect(JSON.stringify(by('dynamodb:GetItem').Resource)).toMatch(/SluiceTable.*Arn/);
    expect(by('cloudformation:DescribeStacks').Resource).toEqual({ Ref: 'AWS::StackId' });
    expect(JSON.stringify(by('cloudwatch:DescribeAlarms').Resource)).toContain(
      `:cloudwatch:${REGION}:${ACCOUNT}:alarm:shop-5xx`,
    );
    expect(JSON.stringify(by('ssm:GetCalendarState').Resource)).toContain(
      `:ssm:${REGION}:${ACCOUNT}:document/holiday-freeze`,
    );
    expect(JSON.stringify(by('ecr:BatchGetImage').Resource)).toContain(
      REPOSITORY_ARN.split(':').slice(3).join(':'),
    );
    expect(by('ecr:GetAuthorizationToken').Resource).toBe('*');
  });

  it('with a customer managed table key: decrypt only, on that key', () => {
    const { template: keyed } = synth(
      (cluster, stack) => ({
        gates: SEED_GATES,
        deliveries: [seedDelivery(cluster)],
        encryptionKey: new kms.Key(stack, 'Key', { enableKeyRotation: true }),
      }),
      {
        then: (sluice, stack) =>
          sluice.grantRead(new iam.Role(stack, 'Operators', { assumedBy: new iam.AccountRootPrincipal() })),
      },
    );
    const kmsActions = actionsOf(operatorStatements(keyed)).filter((a) => a.startsWith('kms:'));
    expect(kmsActions).toEqual(['kms:Decrypt']);
  });
});
