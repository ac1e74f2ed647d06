// The rollbacks entry (alias `rollbacks`) that grantRollback allows, apart from every gate and
// break-glass grant; the grantee is one the gate function lets sign rollbacks.
import * as iam from 'aws-cdk-lib/aws-iam';
import { describe, expect, it } from 'vitest';
import { SEED_GATES, functionId, logicalId, refOf, seedDelivery, statementsOf, synth } from './synth.ts';

const { template, sluice } = synth(
  (cluster) => ({ gates: SEED_GATES, deliveries: [seedDelivery(cluster)] }),
  {
    then: (sluice, stack) => {
      const root = new iam.AccountRootPrincipal();
      sluice.grantRollback(new iam.Role(stack, 'Oncall', { assumedBy: root }));
      sluice.grantBreakGlass(new iam.Role(stack, 'Breaker', { assumedBy: root }));
    },
  },
);
/** An environment value as CloudFormation resolves it (`Fn::GetAtt <id>.Arn` written `arn:<id>`). */
function resolved(value: unknown): string {
  if (typeof value === 'string') return value;
  const node = value as Record<string, unknown>;
  if ('Fn::Join' in node) {
    const [separator, parts] = node['Fn::Join'] as [string, unknown[]];
    return parts.map(resolved).join(separator);
  }
  if ('Fn::GetAtt' in node) return `arn:${(node['Fn::GetAtt'] as string[])[0]}`;
  throw new Error(`cannot resolve ${JSON.stringify(value)}`);
}
const roleId = (prefix: string) => logicalId(template, 'AWS::IAM::Role', (_, id) => id.startsWith(prefix));
const entry = logicalId(template, 'AWS::Lambda::Alias', (p) => p.Name === 'rollbacks');

describe('grantRollback', () => {
  it('lets the grantee invoke the rollbacks entry URL (and the function only via it) and look it up', () => {
    const byAction = Object.fromEntries(
      statementsOf(template, roleId('Oncall')).map((statement) => [statement.Action as string, statement]),
    );
    expect(Object.keys(byAction).sort()).toEqual([
      'lambda:GetFunctionUrlConfig',
      'lambda:InvokeFunction',
      'lambda:InvokeFunctionUrl',
    ]);
    expect(byAction['lambda:InvokeFunctionUrl']).toMatchObject({
      Condition: { StringEquals: { 'lambda:FunctionUrlAuthType': 'AWS_IAM' } },
      Resource: refOf(entry),
    });
    template.hasResourceProperties('AWS::Lambda::Url', { Qualifier: 'rollbacks', AuthType: 'AWS_IAM' });
    expect(sluice.rollbackUrl).toBeDefined();
  });

  it('is never allowed by the break-glass grant, nor break-glass by it', () => {
    expect(JSON.stringify(statementsOf(template, roleId('Breaker')))).not.toContain(entry);
    const breakGlass = logicalId(template, 'AWS::Lambda::Alias', (p) => p.Name === 'break_glass');
    expect(JSON.stringify(statementsOf(template, roleId('Oncall')))).not.toContain(breakGlass);
  });

  it('names the grantee to the gate function as a signer of the rollbacks entry only', () => {
    const gate = functionId(template, 'open and close gates');
    const variables = (
      template.toJSON().Resources[gate] as {
        Properties: { Environment: { Variables: Record<string, unknown> } };
      }
    ).Properties.Environment.Variables;
    const grantees = JSON.parse(resolved(variables.SLUICE_ENTRY_GRANTEES)) as Record<string, string[]>;
    expect(grantees).toEqual({
      break_glass: [`arn:${roleId('Breaker')}`],
      rollbacks: [`arn:${roleId('Oncall')}`],
    });
  });
});
