import { Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type { Construct } from 'constructs';
import { describeAlarmsStatement, gateAlarmArns } from './alarm-triggers.ts';
import type { SluiceSpecs } from './config.ts';
import {
  calendarObjectStatements,
  changeCalendarStatements,
  clusterStatements,
  ecrPullStatements,
} from './permissions.ts';
import { ecrRepositories } from './triggers.ts';

/**
 * What the CLI's reading commands read, and nothing they would write: `status`, `gates`, `gate
 * history` and `rollout status` read the table (items, one partition's queries, a rollout's members
 * in batches); `gates` and `rollout status` also the gates' alarms and Change Calendars; `--stack`
 * this stack's outputs; `diff` also pulls the deliveries' artifacts from ECR and describes their
 * EKS clusters.
 */
export const READ_TABLE_ACTIONS = ['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:BatchGetItem'];

export interface ReadGrantProps {
  readonly table: dynamodb.ITableV2;
  readonly specs: SluiceSpecs;
}

/** The statements of grantRead: each action on exactly the resources this Sluice names. */
export function readStatements(scope: Construct, props: ReadGrantProps): iam.PolicyStatement[] {
  const stack = Stack.of(scope);
  const { config, clusters } = props.specs;
  const alarms = gateAlarmArns(stack, props.specs.alarmEntries);
  return [
    new iam.PolicyStatement({ actions: READ_TABLE_ACTIONS, resources: [props.table.tableArn] }),
    // `sluice --stack`: this stack's outputs (its ARN, not a pattern of names).
    new iam.PolicyStatement({ actions: ['cloudformation:DescribeStacks'], resources: [stack.stackId] }),
    ...(alarms.length > 0 ? [describeAlarmsStatement(alarms)] : []),
    ...changeCalendarStatements(scope, config.gates),
    ...calendarObjectStatements(scope, config.gates),
    ...ecrPullStatements(ecrRepositories(config.deliveries)),
    // A cluster reached through a role is the deployer's to assume, not an operator's: `diff` of
    // such a delivery needs the operator's own way into that account.
    ...clusterStatements(scope, config.deliveries, clusters).filter(
      (statement) => !statement.actions.includes('sts:AssumeRole'),
    ),
  ];
}
