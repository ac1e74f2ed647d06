import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';
import { ROLLOUTS_ALIAS } from '../functions/core/gates/contract.ts';
import { SignedEntry } from './signed-entry.ts';

export interface RolloutControlProps {
  readonly gateFunction: lambda.Function;
}

/**
 * The rollouts entry of the gate function (alias `rollouts` with an AWS_IAM function URL): IAM
 * decides who may halt, resume and roll back rollouts (`sluice rollout halt|resume|rollback
 * --function`), apart from who may open or close gates. Made on the first grantRolloutControl.
 */
export class RolloutControl extends SignedEntry {
  constructor(scope: Construct, id: string, props: RolloutControlProps) {
    super(scope, id, props.gateFunction, ROLLOUTS_ALIAS);
  }
}
