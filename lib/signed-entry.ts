import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import { urlEntry } from './function-entry.ts';

/**
 * An entry of the gate function that people call with signed requests through its AWS_IAM function
 * URL (alias `aliasName`, as the construct `Alias`): IAM decides who may send them.
 */
export class SignedEntry extends Construct {
  readonly alias: lambda.Alias;
  readonly url: lambda.FunctionUrl;

  constructor(scope: Construct, id: string, gateFunction: lambda.Function, aliasName: string) {
    super(scope, id);
    ({ alias: this.alias, url: this.url } = urlEntry(this, 'Alias', gateFunction, aliasName));
  }

  /** Lets `grantee` send signed requests: invoke the entry's URL, and look it up. */
  grant(grantee: iam.IGrantable): iam.Grant {
    return this.url.grantInvokeUrl(grantee).combine(
      iam.Grant.addToPrincipal({
        grantee,
        actions: ['lambda:GetFunctionUrlConfig'],
        resourceArns: [this.alias.functionArn],
      }),
    );
  }
}
