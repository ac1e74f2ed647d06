// The stack's Lambda functions, run from their packaged bundles (the cloud assembly's asset folders)
// in a child process per invocation, with the environment the template gives them, the kubectl
// layer where /opt would hold it, and the credentials of the role they run as.
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestIdentity } from '../sigv4-identity.ts';
import type { ResolvedTemplate } from './template.ts';

const RUNNER = join(dirname(fileURLToPath(import.meta.url)), 'run-handler.mjs');

export interface LocalFunction {
  readonly logicalId: string;
  readonly name: string;
  readonly arn: string;
  /** The folder of its bundle (`index.mjs`). */
  readonly bundleDir: string;
  readonly environment: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
  /** The role it runs as, by name. */
  readonly roleName: string;
}

/** What an invocation answered: the handler's result, or its error as Lambda reports it. */
export type InvocationResult =
  | { readonly result: unknown }
  | { readonly error: { readonly errorType: string; readonly errorMessage: string } };

/** The asset folder of an S3 location CDK gave (`<hash>.zip` → `asset.<hash>`). */
function assetDir(assemblyDir: string, code: unknown, what: string): string {
  const key = (code as { S3Key?: unknown } | undefined)?.S3Key;
  const dir = typeof key === 'string' ? join(assemblyDir, `asset.${key.replace(/\.zip$/, '')}`) : '';
  if (!dir || !existsSync(dir))
    throw new Error(`${what}: no asset folder for its code (${JSON.stringify(code)})`);
  return dir;
}

/** The template's functions whose handler is a packaged bundle (`index.handler`). */
export function templateFunctions(template: ResolvedTemplate, assemblyDir: string): LocalFunction[] {
  return template.ofType('AWS::Lambda::Function').flatMap((logicalId) => {
    const properties = template.resource(logicalId).Properties ?? {};
    if (properties.Handler !== 'index.handler') return [];
    const what = `function ${logicalId}`;
    const environment = Object.fromEntries(
      Object.entries(
        (template.resolve((properties.Environment as { Variables?: object } | undefined)?.Variables) ??
          {}) as Record<string, unknown>,
      ).map(([key, value]) => [key, String(value)]),
    );
    // A layer's files are under /opt in Lambda: here, in the layer's asset folder.
    for (const layer of (properties.Layers as unknown[] | undefined) ?? []) {
      const layerId = (layer as { Ref?: string }).Ref;
      if (!layerId)
        throw new Error(`${what}: a layer the local deploy cannot find (${JSON.stringify(layer)})`);
      const dir = assetDir(assemblyDir, template.resource(layerId).Properties?.Content, `layer ${layerId}`);
      for (const [key, value] of Object.entries(environment))
        if (value.startsWith('/opt/')) environment[key] = join(dir, value.slice('/opt/'.length));
    }
    const roleArn = template.text(properties.Role);
    return [
      {
        logicalId,
        name: template.ref(logicalId),
        arn: template.attribute(logicalId, 'Arn'),
        bundleDir: assetDir(assemblyDir, properties.Code, what),
        environment,
        timeoutMs: Number(properties.Timeout ?? 3) * 1000,
        roleName: roleArn.split('/').at(-1)!,
      },
    ];
  });
}

export interface RunOptions {
  /** The environment of the local components (endpoints, Region), beside the function's own. */
  readonly componentsEnv: Readonly<Record<string, string>>;
  /** The credentials the function's role gives it. */
  readonly identity: TestIdentity;
  /** The ARN it was invoked by (an alias's, a version's), as the context tells the handler. */
  readonly invokedArn?: string;
}

/** One invocation of `fn` with `event`, in a child process, answered when the handler returns. */
export async function runFunction(
  fn: LocalFunction,
  event: unknown,
  { componentsEnv, identity, invokedArn }: RunOptions,
): Promise<InvocationResult> {
  const dir = mkdtempSync(join(tmpdir(), `sluice-fn-${fn.name.slice(0, 20)}-`));
  const file = join(dir, 'invocation.json');
  const requestId = randomUUID();
  writeFileSync(
    file,
    JSON.stringify({
      event,
      timeoutMs: fn.timeoutMs,
      context: {
        awsRequestId: requestId,
        invokedFunctionArn: invokedArn ?? fn.arn,
        functionName: fn.name,
        functionVersion: '$LATEST',
        memoryLimitInMB: '1024',
        logGroupName: `/aws/lambda/${fn.name}`,
        logStreamName: requestId,
        callbackWaitsForEmptyEventLoop: true,
      },
    }),
  );
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? tmpdir(),
    ...componentsEnv,
    ...fn.environment,
    AWS_LAMBDA_FUNCTION_NAME: fn.name,
    AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
    AWS_LAMBDA_FUNCTION_TIMEOUT: String(fn.timeoutMs / 1000),
    AWS_ACCESS_KEY_ID: identity.accessKeyId,
    AWS_SECRET_ACCESS_KEY: identity.secretAccessKey,
    ...(identity.sessionToken ? { AWS_SESSION_TOKEN: identity.sessionToken } : {}),
    POWERTOOLS_METRICS_DISABLED: 'true',
  };
  try {
    const logs = await new Promise<string>((resolve, reject) => {
      execFile(
        process.execPath,
        [RUNNER, fn.bundleDir, file],
        { env, timeout: fn.timeoutMs + 5_000, maxBuffer: 64 * 1024 * 1024 },
        (error, stdout, stderr) =>
          error && !existsSync(`${file}.out`) ? reject(error) : resolve(stdout + stderr),
      );
    }).catch((error: Error) => {
      throw new Error(`function ${fn.name} did not answer (timeout ${fn.timeoutMs} ms): ${error.message}`);
    });
    const out = `${file}.out`;
    if (!existsSync(out)) throw new Error(`function ${fn.name} exited without an answer; its log:\n${logs}`);
    return JSON.parse(readFileSync(out, 'utf8')) as InvocationResult;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
