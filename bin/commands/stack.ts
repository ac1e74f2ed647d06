// `sluice --stack <name>` (SLUICE_STACK): the deployed stack's outputs name the table and the gate
// function, so an operator needs nothing but the stack's name and AWS credentials.
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import {
  RUNTIME_ENV,
  STACK_OUTPUTS,
  stackOutputExportName,
  type StackOutputKey,
} from '../../functions/core/runtime-contract.ts';

/** What each output sets for the CLI, unless the environment or a flag already does. */
const OUTPUT_ENV: Partial<Record<StackOutputKey, string>> = {
  [STACK_OUTPUTS.table]: RUNTIME_ENV.table,
  [STACK_OUTPUTS.gateFunction]: 'SLUICE_GATE_FUNCTION',
};

/** Outputs every Sluice stack has: without the table's, the CLI has nothing to read. */
const REQUIRED: readonly StackOutputKey[] = [STACK_OUTPUTS.table];

/**
 * The AWS region the SDK would use (AWS_REGION, or `region` of the profile in ~/.aws/config),
 * or a clear error instead of the SDK's bare "Region is missing".
 */
export async function configuredRegion(client: { config: { region: () => Promise<string> } }, why: string) {
  try {
    return await client.config.region();
  } catch {
    throw new Error(
      `no AWS region to ${why}: set AWS_REGION (or \`region\` in your AWS profile, ~/.aws/config) to the stack's region`,
    );
  }
}

/** `<prefix>-<key>` → value, of the outputs of `stack` under `prefix`. */
export async function readStackOutputs(
  client: CloudFormationClient,
  stack: string,
  prefix: string | undefined,
): Promise<{ values: Map<StackOutputKey, string>; prefix: string; region: string }> {
  const region = await configuredRegion(client, `read stack '${stack}'`);
  let outputs;
  try {
    const answer = await client.send(new DescribeStacksCommand({ StackName: stack }));
    outputs = answer.Stacks?.[0]?.Outputs ?? [];
  } catch (error) {
    const message = (error as Error).message;
    if (/does not exist/.test(message))
      throw new Error(`stack '${stack}' does not exist in ${region}: is AWS_REGION the stack's region?`, {
        cause: error,
      });
    throw new Error(
      `could not read stack '${stack}' in ${region} (cloudformation:DescribeStacks; sluice.grantRead gives it): ${message}`,
      { cause: error },
    );
  }
  const exportPrefix = prefix ?? stack;
  const values = new Map<StackOutputKey, string>();
  for (const key of Object.values(STACK_OUTPUTS)) {
    const output = outputs.find((o) => o.ExportName === stackOutputExportName(exportPrefix, key));
    if (output?.OutputValue !== undefined) values.set(key, output.OutputValue);
  }
  const missing = REQUIRED.filter((key) => !values.has(key));
  if (missing.length > 0) {
    const suffix = `-${STACK_OUTPUTS.table}`;
    const others = outputs
      .map((o) => o.ExportName ?? '')
      .filter((name) => name.endsWith(suffix))
      .map((name) => name.slice(0, -suffix.length));
    const wanted = Object.values(STACK_OUTPUTS)
      .filter((key) => !values.has(key))
      .map((key) => stackOutputExportName(exportPrefix, key));
    throw new Error(
      [
        `stack '${stack}' (${region}) has no sluice outputs exported as ${wanted.join(', ')}.`,
        others.length > 0
          ? `It has a Sluice exporting under ${others.map((p) => `'${p}'`).join(', ')}: pass --export-prefix ${others[0]}.`
          : 'The Sluice construct outputs them since this version of sluice: deploy the stack again (cdk deploy) with it, or set its exportPrefix and pass --export-prefix.',
        `Or name them yourself: SLUICE_TABLE=<table> (and --function <gate function>).`,
      ].join('\n'),
    );
  }
  return { values, prefix: exportPrefix, region };
}

/**
 * Points the CLI at a deployed stack: sets SLUICE_TABLE and SLUICE_GATE_FUNCTION from its outputs
 * where the environment does not set them already (explicit flags and variables win). Returns the
 * variables it set.
 */
export async function useStackOutputs(
  stack: string,
  prefix: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
  client: CloudFormationClient = new CloudFormationClient({}),
): Promise<Record<string, string>> {
  const { values, region } = await readStackOutputs(client, stack, prefix);
  const set: Record<string, string> = {};
  for (const [key, variable] of Object.entries(OUTPUT_ENV)) {
    const value = values.get(key as StackOutputKey);
    if (value !== undefined && !env[variable]) set[variable] = value;
  }
  // The table's client and the signed requests run in the region the stack was read in.
  if (!env.AWS_REGION) set.AWS_REGION = region;
  Object.assign(env, set);
  return set;
}
