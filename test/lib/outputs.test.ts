// The construct outputs what the CLI (`sluice --stack`) and the docs name, under export names
// derived from the stack's name; the example app adds none of its own.
import { App, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../lib/bundle-options.ts';
import { Sluice } from '../../lib/index.ts';
import { STACK_OUTPUTS } from '../../functions/core/runtime-contract.ts';
import { ACCOUNT, REGION, SEED_GATES, synth, seedSynth } from './synth.ts';

type Output = { Value: unknown; Export?: { Name: string }; Description?: string };
const outputsOf = (template: { toJSON(): Record<string, unknown> }) =>
  (template.toJSON().Outputs ?? {}) as Record<string, Output>;
const exportNames = (template: { toJSON(): Record<string, unknown> }) =>
  Object.values(outputsOf(template))
    .map((output) => output.Export?.Name)
    .sort();

describe('stack outputs', () => {
  it('the table, the functions, the deployer role, the runbooks, the gate entries and the dashboard, exported as <stack>-<key>', () => {
    const { template, stack } = seedSynth();
    expect(exportNames(template)).toEqual(
      [
        STACK_OUTPUTS.table,
        STACK_OUTPUTS.gateFunction,
        STACK_OUTPUTS.reconcileFunction,
        STACK_OUTPUTS.deployerRole,
        STACK_OUTPUTS.gateRunbooks,
        STACK_OUTPUTS.gateEntryUrls,
        STACK_OUTPUTS.dashboardUrl,
      ]
        .map((key) => `${stack.stackName}-${key}`)
        .sort(),
    );
    const outputs = outputsOf(template);
    // Logical ids without a hash: `cdk deploy` prints them as Test.SluiceTableName.
    expect(outputs.SluiceTableName?.Value).toEqual({ Ref: expect.stringMatching(/^SluiceTable/) });
    expect(outputs.SluiceGateFunctionName?.Value).toEqual({
      Ref: expect.stringMatching(/^SluiceGateFunction/),
    });
    expect(outputs.SluiceDeployerRoleArn?.Value).toEqual({
      'Fn::GetAtt': [expect.stringMatching(/^SluiceDeployerRole/), 'Arn'],
    });
    for (const output of Object.values(outputs)) expect(output.Description).toMatch(/^sluice: /);
    const entries = JSON.stringify(outputs.SluiceGateEntryUrls?.Value);
    for (const gate of SEED_GATES) expect(entries).toContain(gate.name);
  });

  it('break-glass and rollout entries, made by a grant after the constructor, are output too', () => {
    const { template, stack } = synth(undefined, {
      then: (sluice, s) =>
        sluice.grantBreakGlass(new iam.Role(s, 'Oncall', { assumedBy: new iam.AccountRootPrincipal() })),
    });
    expect(exportNames(template)).toEqual(
      expect.arrayContaining([
        `${stack.stackName}-${STACK_OUTPUTS.breakGlassUrl}`,
        `${stack.stackName}-${STACK_OUTPUTS.breakGlassRunbook}`,
      ]),
    );
    expect(exportNames(template)).not.toContain(`${stack.stackName}-${STACK_OUTPUTS.rolloutControlUrl}`);
  });

  it('exportPrefix names them instead, and two Sluices in one stack need two prefixes', () => {
    const { template } = synth(() => ({
      gates: SEED_GATES,
      exportPrefix: 'payments',
      dashboard: false,
    }));
    expect(exportNames(template)).toContain('payments-TableName');
    expect(exportNames(template).filter((name) => !name!.startsWith('payments-'))).toEqual([]);

    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    const stack = new Stack(app, 'Two', { env: { account: ACCOUNT, region: REGION } });
    new Sluice(stack, 'First');
    expect(() => new Sluice(stack, 'Second')).toThrow(
      "exportPrefix 'Two' is already taken by another Sluice in stack Two: give each Sluice its own exportPrefix",
    );
    expect(() => new Sluice(stack, 'Third', { exportPrefix: 'bad prefix!' })).toThrow(
      "exportPrefix 'bad prefix!': an export name holds only letters, digits, hyphens and colons",
    );
  });

  it("the example app (bin/app.ts) makes no outputs of its own: the construct's are the ones", () => {
    const app = readFileSync(join(PROJECT_ROOT, 'bin', 'app.ts'), 'utf8');
    expect(app).not.toContain('CfnOutput');
  });
});
