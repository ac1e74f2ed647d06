// Red team: who can reach which runbook and which entry, from the synthesized template. These held
// (they pass on the code as it was), apart from one fact that made the Interactive-mode breach
// reachable (test/redteam/break-glass-runbook-execution.test.ts): every gate approver may signal
// every Automation execution of the account, the break-glass runbook's included.
import * as iam from 'aws-cdk-lib/aws-iam';
import { beforeAll, describe, expect, it } from 'vitest';
import { logicalId, statementsOf, synth, type Synthesized } from '../lib/synth.ts';

let synthesized: Synthesized;
const role = (id: string) =>
  logicalId(synthesized.template, 'AWS::IAM::Role', (_p, logical) => logical.startsWith(id));
/** The statements of a role: action(s) → resources and condition, as JSON text to search. */
const grants = (roleId: string) =>
  statementsOf(synthesized.template, roleId).map((s) => ({
    actions: ([] as string[]).concat(s.Action as string | string[]),
    resource: JSON.stringify(s.Resource),
    condition: JSON.stringify(s.Condition ?? {}),
  }));
const allowing = (roleId: string, action: string) => grants(roleId).filter((g) => g.actions.includes(action));

beforeAll(() => {
  synthesized = synth(undefined, {
    then: (sluice, stack) => {
      const principal = new iam.AccountRootPrincipal();
      sluice.grantBreakGlass(new iam.Role(stack, 'OnCall', { assumedBy: principal }));
      sluice.grantGateRequests(new iam.Role(stack, 'Approver', { assumedBy: principal }), 'sre-approval');
      sluice.grantRequestApproval(new iam.Role(stack, 'Requester', { assumedBy: principal }), 'sre-approval');
    },
  });
});

describe('the runbooks and entries: who reaches what', () => {
  it('a gate approver may signal every execution (StartStep included): the function may not trust who ran a step', () => {
    const signal = allowing(role('Approver'), 'ssm:SendAutomationSignal');
    expect(signal.map((g) => g.resource).join()).toMatch(/automation-execution\/\*/);
  });

  it('each automation role invokes its own alias and nothing else', () => {
    const breakGlass = allowing(role('SluiceBreakGlassRunbookAutomationRole'), 'lambda:InvokeFunction');
    expect(breakGlass.map((g) => g.resource)).toEqual([expect.stringMatching(/SluiceBreakGlassAlias/)]);
    const gates = allowing(role('SluiceGateRunbooksAutomationRole'), 'lambda:InvokeFunction');
    expect(gates.map((g) => g.resource)).toEqual([expect.stringMatching(/RunbooksAlias/)]);
  });

  it('a requester cannot start the break-glass runbook nor pass its role, and the other way round', () => {
    const requester = role('Requester');
    const onCall = role('OnCall');
    expect(
      allowing(requester, 'ssm:StartAutomationExecution')
        .map((g) => g.resource)
        .join(),
    ).not.toMatch(/break-glass/);
    expect(
      allowing(requester, 'iam:PassRole')
        .map((g) => g.resource)
        .join(),
    ).not.toMatch(/BreakGlass/);
    expect(allowing(onCall, 'ssm:StartAutomationExecution').map((g) => g.resource)).toEqual([
      expect.stringMatching(/automation-definition\/sluice-break-glass-[0-9a-f]{10}:\*/),
    ]);
    expect(allowing(onCall, 'iam:PassRole').map((g) => g.resource)).toEqual([
      expect.stringMatching(/SluiceBreakGlassRunbookAutomationRole/),
    ]);
    expect(allowing(onCall, 'ssm:SendAutomationSignal')).toEqual([]);
  });

  it('a grantee invokes break_glass only through its URL: no direct {"ssmExecution"} invocation', () => {
    const invoke = allowing(role('OnCall'), 'lambda:InvokeFunction');
    expect(invoke.length).toBeGreaterThan(0);
    for (const grant of invoke) expect(grant.condition).toContain('lambda:InvokedViaFunctionUrl');
  });
});
