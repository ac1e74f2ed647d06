import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import { ROLLBACKS_ALIAS } from '../functions/core/gates/contract.ts';
import { urlEntry } from './function-entry.ts';

export interface RollbackControlProps {
  readonly gateFunction: lambda.Function;
}

/**
 * The rollbacks entry of the gate function (alias `rollbacks` with an AWS_IAM function URL): IAM
 * decides who may roll a delivery back to a revision it applied before (`sluice rollback
 * <delivery> --function`), apart from who may open, close or break the gates. Made on the first
 * grantRollback.
 */
export class RollbackControl extends Construct {
  readonly alias: lambda.Alias;
  readonly url: lambda.FunctionUrl;

  constructor(scope: Construct, id: string, props: RollbackControlProps) {
    super(scope, id);
    ({ alias: this.alias, url: this.url } = urlEntry(this, 'Alias', props.gateFunction, ROLLBACKS_ALIAS));
  }

  /** Lets `grantee` send signed rollbacks: invoke the entry's URL, and look it up. */
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
