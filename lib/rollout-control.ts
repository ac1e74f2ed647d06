import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { urlEntry } from './function-entry.ts';
import { Construct } from 'constructs';
import { ROLLOUTS_ALIAS } from '../functions/core/gates/contract.ts';

export interface RolloutControlProps {
  readonly gateFunction: lambda.Function;
}

/**
 * The rollouts entry of the gate function (alias `rollouts` with an AWS_IAM function URL): IAM
 * decides who may halt, resume and roll back rollouts (`sluice rollout halt|resume|rollback
 * --function`), apart from who may open or close gates. Made on the first grantRolloutControl.
 */
export class RolloutControl extends Construct {
  readonly alias: lambda.Alias;
  readonly url: lambda.FunctionUrl;

  constructor(scope: Construct, id: string, props: RolloutControlProps) {
    super(scope, id);
    ({ alias: this.alias, url: this.url } = urlEntry(this, 'Alias', props.gateFunction, ROLLOUTS_ALIAS));
  }

  /** Lets `grantee` send signed rollout actions: invoke the entry's URL, and look it up. */
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
