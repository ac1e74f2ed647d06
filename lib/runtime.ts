import * as lambda from 'aws-cdk-lib/aws-lambda';

/** The Node.js runtimes the functions' bundles are built and tested for. */
export const SUPPORTED_RUNTIMES = ['nodejs20.x', 'nodejs22.x'] as const;

/** The functions' runtime: Node.js 22 unless `runtime` names another supported one. */
export function functionRuntime(runtime: lambda.Runtime | undefined): lambda.Runtime {
  if (runtime === undefined) return lambda.Runtime.NODEJS_22_X;
  if (!(SUPPORTED_RUNTIMES as readonly string[]).includes(runtime.name))
    throw new Error(
      `runtime '${runtime.name}': sluice's functions run on ${SUPPORTED_RUNTIMES.join(' or ')} (their bundles target Node.js 20 and later)`,
    );
  return runtime;
}
