import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';
import { ROLLBACKS_ALIAS } from '../functions/core/gates/contract.ts';
import { SignedEntry } from './signed-entry.ts';

export interface RollbackControlProps {
  readonly gateFunction: lambda.Function;
}

/**
 * The rollbacks entry of the gate function (alias `rollbacks` with an AWS_IAM function URL): IAM
 * decides who may roll a delivery back to a revision it applied before (`sluice rollback
 * <delivery> --function`), apart from who may open, close or break the gates. Made on the first
 * grantRollback.
 */
export class RollbackControl extends SignedEntry {
  constructor(scope: Construct, id: string, props: RollbackControlProps) {
    super(scope, id, props.gateFunction, ROLLBACKS_ALIAS);
  }
}
