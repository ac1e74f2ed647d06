import * as lambda from 'aws-cdk-lib/aws-lambda';

/** The Node.js runtimes the functions' bundles are built and tested for. */
export const SUPPORTED_RUNTIMES = ['nodejs20.x', 'nodejs22.x'] as const;

/** `runtime`, once it is one the functions' bundles support (the default is in resolved-props.ts). */
export function functionRuntime(runtime: lambda.Runtime): lambda.Runtime {
  if (!(SUPPORTED_RUNTIMES as readonly string[]).includes(runtime.name))
    throw new Error(
      `runtime '${runtime.name}': sluice's functions run on ${SUPPORTED_RUNTIMES.join(' or ')} (their bundles target Node.js 20 and later)`,
    );
  return runtime;
}
