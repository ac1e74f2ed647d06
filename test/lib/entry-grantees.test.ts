// The gate function learns who the stack granted each of its entries (SLUICE_ENTRY_GRANTEES) and
// which accounts it trusts (SLUICE_TRUSTED_ACCOUNTS): a signer is let act only when it is one of
// them. Role ARNs are references at synthesis, resolved by CloudFormation at deploy; a grantee
// the function could not match to a signer (a group) is refused at synthesis.
import * as iam from 'aws-cdk-lib/aws-iam';
import { describe, expect, it } from 'vitest';
import { ACCOUNT, SEED_GATES, functionId, logicalId, seedDelivery, synth } from './synth.ts';

const DANA = `arn:aws:iam::${ACCOUNT}:user/ops/dana`;
const OTHER = '210987654321';

const { template } = synth(
  (cluster) => ({ gates: SEED_GATES, deliveries: [seedDelivery(cluster)], trustedAccounts: [OTHER] }),
  {
    then: (sluice, stack) => {
      const root = new iam.AccountRootPrincipal();
      sluice.grantGateRequests(new iam.Role(stack, 'Approver', { assumedBy: root }), 'sre-approval');
      sluice.grantGateRequests(new iam.Role(stack, 'Closer', { assumedBy: root }), 'sre-approval', {
        actions: ['close'],
      });
      sluice.grantGateRequests(iam.User.fromUserArn(stack, 'Dana', DANA), 'no-deploy-friday', {
        actions: ['open'],
      });
      sluice.grantBreakGlass(new iam.Role(stack, 'Oncall', { assumedBy: root }));
      sluice.grantBreakGlass(new iam.AccountPrincipal(OTHER));
    },
  },
);

/**
 * An environment value as CloudFormation resolves it: Fn::Join of strings, `Fn::GetAtt <id>.Arn`
 * (written here `arn:<id>`, as its role ARN) and Ref AWS::AccountId / AWS::Partition.
 */
function resolved(value: unknown): string {
  if (typeof value === 'string') return value;
  const node = value as Record<string, unknown>;
  if ('Fn::Join' in node) {
    const [separator, parts] = node['Fn::Join'] as [string, unknown[]];
    return parts.map(resolved).join(separator);
  }
  if ('Fn::GetAtt' in node) return `arn:${(node['Fn::GetAtt'] as string[])[0]}`;
  if ('Ref' in node && node.Ref === 'AWS::Partition') return 'aws';
  throw new Error(`cannot resolve ${JSON.stringify(value)}`);
}

const gateVariables = () => {
  const gate = functionId(template, 'open and close gates');
  return (
    template.toJSON().Resources[gate] as {
      Properties: { Environment: { Variables: Record<string, unknown> } };
    }
  ).Properties.Environment.Variables;
};
const roleId = (prefix: string) => logicalId(template, 'AWS::IAM::Role', (_, id) => id.startsWith(prefix));

describe('the gate function is told who may act through each entry', () => {
  it("gets each entry's grantees: roles (resolved at deploy), an imported user, an account", () => {
    const grantees = JSON.parse(resolved(gateVariables().SLUICE_ENTRY_GRANTEES)) as Record<string, string[]>;
    const [approver, closer, oncall] = [roleId('Approver'), roleId('Closer'), roleId('Oncall')].map(
      (id) => `arn:${id}`,
    );
    expect(grantees).toEqual({
      break_glass: [oncall, OTHER],
      'close_sre-approval': [approver, closer],
      'open_no-deploy-friday': [DANA],
      'open_sre-approval': [approver],
    });
  });

  it("trusts the stack's own account and the accounts trustedAccounts names", () => {
    expect(JSON.parse(resolved(gateVariables().SLUICE_TRUSTED_ACCOUNTS))).toEqual([ACCOUNT, OTHER]);
  });

  it('refuses a grantee it could not match to a signer, and a malformed trusted account, at synthesis', () => {
    expect(() =>
      synth(undefined, {
        then: (sluice, stack) => {
          sluice.grantGateRequests(new iam.Group(stack, 'Approvers'), 'sre-approval');
        },
      }),
    ).toThrow(
      /grantGateRequests\(…, 'sre-approval'\): .* is not an IAM role, user or account, so the gate function could not match a request's signer to it/,
    );
    expect(() =>
      synth(undefined, {
        then: (sluice) => {
          sluice.grantBreakGlass(new iam.ServicePrincipal('ssm.amazonaws.com'));
        },
      }),
    ).toThrow(/grantBreakGlass: .* is not an IAM role, user or account/);
    expect(() =>
      synth((cluster) => ({
        gates: SEED_GATES,
        deliveries: [seedDelivery(cluster)],
        trustedAccounts: ['12345'],
      })),
    ).toThrow("trustedAccounts: '12345' is not a 12-digit AWS account id");
  });
});
