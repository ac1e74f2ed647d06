// `sluice --stack <name>`: the CLI finds the table and the gate function in a deployed stack's
// outputs (CloudFormation DescribeStacks, here the stand-in that checks signatures), as the
// construct exports them; the environment and flags still win, and what is missing is named.
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { writeStandInStack } from '../../dev/cloudformation-endpoint.ts';
import { LOCAL_STACK } from '../../dev/components.ts';
import { TEST_IDENTITIES } from '../../dev/sigv4-identity.ts';
import { STACK_OUTPUTS, stackOutputExportName } from '../../functions/core/runtime-contract.ts';
import { sluice, sluiceWith } from '../support/cli.ts';
import { kubeconfigCopy, testbed, uniqueName } from '../support/testbed.ts';

const bed = testbed();
const delivery = uniqueName('stack');

/** This process's environment (the local components) without the variables a stack's outputs set. */
function withoutTable(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.SLUICE_TABLE;
  delete env.SLUICE_GATE_FUNCTION;
  delete env.SLUICE_STACK;
  return { ...env, ...extra };
}

/** A stack whose Sluice exports its outputs under `prefix` (the stack's name by default). */
function deployStack(name: string, outputs: Record<string, string>, prefix = name): void {
  writeStandInStack(bed.cloudFormation.stacksDir, name, {
    outputs: Object.entries(outputs).map(([key, value]) => ({
      OutputKey: `Sluice${key}`,
      OutputValue: value,
      Description: `sluice: ${key}`,
      ExportName: stackOutputExportName(prefix, key as (typeof STACK_OUTPUTS)[keyof typeof STACK_OUTPUTS]),
    })),
  });
}

beforeAll(async () => {
  const config = join(mkdtempSync(join(tmpdir(), 'sluice-stack-')), 'sluice.yaml');
  writeFileSync(
    config,
    `deliveries:\n  - name: ${delivery}\n    source: { url: "oci://registry.example/${delivery}", tag: v1 }\n    cluster: { kubeconfig: ${kubeconfigCopy()} }\n`,
  );
  expect((await sluice('register', '-f', config)).code).toBe(0);
});

describe('sluice --stack', () => {
  it("reads the table from the stack's outputs: --stack before or after the command, or SLUICE_STACK", async () => {
    const stack = uniqueName('Shop');
    deployStack(stack, {
      [STACK_OUTPUTS.table]: bed.dynamodb.table,
      [STACK_OUTPUTS.gateFunction]: `${stack}-gate`,
      [STACK_OUTPUTS.reconcileFunction]: `${stack}-reconcile`,
    });
    for (const args of [
      ['--stack', stack, 'status', delivery, '--json'],
      ['status', delivery, '--json', '--stack', stack],
    ]) {
      const result = await sluiceWith(withoutTable(), ...args);
      expect(result.stderr).toBe('');
      expect(JSON.parse(result.stdout)).toMatchObject({ delivery });
    }
    const fromEnv = await sluiceWith(withoutTable({ SLUICE_STACK: stack }), 'status', delivery, '--json');
    expect(JSON.parse(fromEnv.stdout)).toMatchObject({ delivery });
  });

  it('without --stack or SLUICE_TABLE still says SLUICE_TABLE is not set', async () => {
    const result = await sluiceWith(withoutTable(), 'status');
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('SLUICE_TABLE is not set');
  });

  it('the gate function of the outputs is where gate requests go, signed (no --function needed)', async () => {
    const stack = uniqueName('Shop');
    deployStack(stack, {
      [STACK_OUTPUTS.table]: bed.dynamodb.table,
      [STACK_OUTPUTS.gateFunction]: `${stack}-gate`,
    });
    // No Lambda endpoint here: the look-up of the entry's URL fails, naming the function it asked for.
    const result = await sluiceWith(
      withoutTable({ AWS_ENDPOINT_URL_LAMBDA: 'http://127.0.0.1:9' }),
      '--stack',
      stack,
      'gate',
      'open',
      'some-gate',
      '--reason',
      'CHG-1',
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`function ${stack}-gate, alias open_some-gate`);
  });

  it('SLUICE_TABLE and --function win over the outputs', async () => {
    const stack = uniqueName('Shop');
    deployStack(stack, {
      [STACK_OUTPUTS.table]: 'no-such-table',
      [STACK_OUTPUTS.gateFunction]: 'not-this-one',
    });
    const status = await sluiceWith(
      withoutTable({ SLUICE_TABLE: bed.dynamodb.table }),
      '--stack',
      stack,
      'status',
      delivery,
      '--json',
    );
    expect(JSON.parse(status.stdout)).toMatchObject({ delivery });
    const gate = await sluiceWith(
      withoutTable({ AWS_ENDPOINT_URL_LAMBDA: 'http://127.0.0.1:9' }),
      '--stack',
      stack,
      'gate',
      'open',
      'some-gate',
      '--function',
      'this-one',
    );
    expect(gate.stderr).toContain('function this-one, alias open_some-gate');
  });

  it('names the outputs a stack lacks, and how to get them', async () => {
    const stack = uniqueName('Old');
    writeStandInStack(bed.cloudFormation.stacksDir, stack, {
      outputs: [{ OutputKey: 'Something', OutputValue: 'else' }],
    });
    const result = await sluiceWith(withoutTable(), '--stack', stack, 'status');
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      `stack '${stack}' (us-east-1) has no sluice outputs exported as ${stack}-TableName, ${stack}-GateFunctionName`,
    );
    expect(result.stderr).toContain('deploy the stack again (cdk deploy)');
    expect(result.stderr).toContain('SLUICE_TABLE=<table>');
  });

  it('a Sluice with its own exportPrefix: named in the error, then read with --export-prefix', async () => {
    const stack = uniqueName('Two');
    deployStack(stack, { [STACK_OUTPUTS.table]: bed.dynamodb.table }, 'payments');
    const without = await sluiceWith(withoutTable(), '--stack', stack, 'status', delivery, '--json');
    expect(without.code).toBe(1);
    expect(without.stderr).toContain(
      "It has a Sluice exporting under 'payments': pass --export-prefix payments",
    );
    const withPrefix = await sluiceWith(
      withoutTable(),
      '--stack',
      stack,
      '--export-prefix',
      'payments',
      'status',
      delivery,
      '--json',
    );
    expect(JSON.parse(withPrefix.stdout)).toMatchObject({ delivery });
  });

  it('a stack that is not there: says so, with the region it looked in', async () => {
    const result = await sluiceWith(withoutTable(), '--stack', 'NotDeployed', 'status');
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      "sluice: stack 'NotDeployed' does not exist in us-east-1: is AWS_REGION the stack's region?\n",
    );
  });

  it('without a region: says how to set one, not the SDK\'s bare "Region is missing"', async () => {
    const env = withoutTable({ AWS_CONFIG_FILE: join(tmpdir(), 'sluice-no-such-config') });
    delete env.AWS_REGION;
    delete env.AWS_DEFAULT_REGION;
    delete env.AWS_PROFILE;
    const stack = await sluiceWith(env, '--stack', 'Shop', 'status');
    expect(stack.code).toBe(1);
    expect(stack.stderr).toContain("no AWS region to read stack 'Shop': set AWS_REGION");
    const table = await sluiceWith({ ...env, SLUICE_TABLE: bed.dynamodb.table }, 'status');
    expect(table.code).toBe(1);
    expect(table.stderr).toContain(`no AWS region to reach table '${bed.dynamodb.table}': set AWS_REGION`);
    expect(`${stack.stderr}${table.stderr}`).not.toContain('Region is missing');
  });

  it('signed with a key CloudFormation does not take: the refusal, and what grants the read', async () => {
    const result = await sluiceWith(
      withoutTable({
        AWS_ACCESS_KEY_ID: TEST_IDENTITIES.carol.accessKeyId,
        AWS_SECRET_ACCESS_KEY: 'not-carols-secret',
      }),
      '--stack',
      'Shop',
      'status',
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      "could not read stack 'Shop' in us-east-1 (cloudformation:DescribeStacks; sluice.grantRead gives it)",
    );
    expect(result.stderr).toContain('signature');
  });

  it(`locally, the stand-in stack ${LOCAL_STACK} names the local table (sluice dev up)`, async () => {
    const result = await sluiceWith(withoutTable(), '--stack', LOCAL_STACK, 'status', delivery, '--json');
    expect(JSON.parse(result.stdout)).toMatchObject({ delivery });
  });
});
