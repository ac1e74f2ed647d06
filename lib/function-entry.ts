// The gate function's entries: aliases of its current version that IAM grants apart (gate
// requests, break-glass, rollout control, runbooks, schedules, image push records); the function
// reads which one it was invoked through.
import * as lambda from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';

/** An alias `aliasName` of `fn`'s current version, as the construct `id` under `scope`. */
export function entryAlias(
  scope: Construct,
  id: string,
  fn: lambda.Function,
  aliasName: string,
): lambda.Alias {
  return new lambda.Alias(scope, id, { aliasName, version: fn.currentVersion });
}

/** An entry people call with signed requests: the alias and an AWS_IAM function URL on it. */
export function urlEntry(
  scope: Construct,
  id: string,
  fn: lambda.Function,
  aliasName: string,
): { readonly alias: lambda.Alias; readonly url: lambda.FunctionUrl } {
  const alias = entryAlias(scope, id, fn, aliasName);
  return { alias, url: alias.addFunctionUrl({ authType: lambda.FunctionUrlAuthType.AWS_IAM }) };
}
