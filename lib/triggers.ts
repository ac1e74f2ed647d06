import { Duration, Stack, Token } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { entryAlias } from './function-entry.ts';
import { Construct } from 'constructs';
import type { Delivery } from '../functions/core/config/index.ts';
import { PUSH_RECORDS_ALIAS } from '../functions/core/access/entry.ts';
import { ecrRepositoryOf, type EcrRepository } from './sources.ts';

/** The ECR repositories of the deliveries with provider `aws`, each once, by ARN. */
export function ecrRepositories(deliveries: readonly Delivery[]): EcrRepository[] {
  const byArn = new Map<string, EcrRepository>();
  for (const delivery of deliveries) {
    if (delivery.source.provider !== 'aws') continue;
    const repository = ecrRepositoryOf(delivery.source.url);
    if (repository) byArn.set(repository.repositoryArn, repository);
  }
  return [...byArn.values()].sort((a, b) => a.repositoryArn.localeCompare(b.repositoryArn));
}

export interface EcrPushTriggersProps {
  readonly repositories: readonly EcrRepository[];
  readonly reconcileFunction: lambda.IFunction;
  /** Where an event the rule could not deliver to the function goes. */
  readonly deadLetterQueue: sqs.IQueue;
  /**
   * Push events of repositories in other accounts or regions are forwarded to this bus.
   * @default false
   */
  readonly forwarded?: boolean;
}

/**
 * Whether a repository's push events arrive on the stack's default bus: ECR sends them to the
 * default bus of the repository's own account and region. `'maybe'` when the stack's account or
 * region is known only at deploy time.
 */
export function pushEventsArrive(stack: Stack, repository: EcrRepository): boolean | 'maybe' {
  if (Token.isUnresolved(stack.account) || Token.isUnresolved(stack.region)) return 'maybe';
  return stack.account === repository.account && stack.region === repository.region;
}

/**
 * An EventBridge rule per ECR repository on successful pushes, invoking the reconcile function with
 * the event (it reconciles every delivery of that repository). Only for repositories whose events
 * reach this stack's default bus (or all, when `forwarded`): a rule for another account's or
 * region's repository could never match. An environment-agnostic stack cannot tell, so it gets a
 * rule for every repository (and a synth-time warning).
 */
export class EcrPushTriggers extends Construct {
  readonly rules: events.Rule[] = [];
  /** Repositories without a rule: their deliveries pick up pushes at each interval. */
  readonly unwatched: EcrRepository[] = [];

  constructor(scope: Construct, id: string, props: EcrPushTriggersProps) {
    super(scope, id);
    const stack = Stack.of(this);
    for (const repository of props.repositories) {
      const arrives = props.forwarded ? true : pushEventsArrive(stack, repository);
      if (arrives === false) {
        this.unwatched.push(repository);
        continue;
      }
      const id = `${repository.account}-${repository.region}-${repository.repositoryName.replace(/\//g, '--')}`;
      const rule = new events.Rule(this, id, {
        description: `sluice: reconcile the deliveries of ${repository.repositoryName} when an image is pushed`,
        eventPattern: {
          source: ['aws.ecr'],
          detailType: ['ECR Image Action'],
          account: [repository.account],
          region: [repository.region],
          detail: {
            'action-type': ['PUSH'],
            result: ['SUCCESS'],
            'repository-name': [repository.repositoryName],
          },
        },
        targets: [
          new targets.LambdaFunction(props.reconcileFunction, {
            retryAttempts: 2,
            maxEventAge: Duration.hours(1),
            deadLetterQueue: props.deadLetterQueue,
          }),
        ],
      });
      this.rules.push(rule);
    }
  }
}

export interface ImagePushRecordsProps {
  readonly gateFunction: lambda.Function;
  /** Where a record the rule could not deliver to the function goes. */
  readonly deadLetterQueue: sqs.IQueue;
}

/**
 * For gates with `preventSelfApproval`: an EventBridge rule on CloudTrail's record of each
 * successful ECR `PutImage` in this account and region, sending it to the gate function, which
 * records who pushed the digest. CloudTrail delivers these records to EventBridge only when a
 * trail logs management events (a synth-time warning says so). The rule invokes an alias of its
 * own, the only entry through which the function takes push records.
 */
export class ImagePushRecords extends Construct {
  readonly rule: events.Rule;
  /** The alias the rule invokes; its asynchronous invocations are configured apart from the function's. */
  readonly entry: lambda.Alias;

  constructor(scope: Construct, id: string, props: ImagePushRecordsProps) {
    super(scope, id);
    this.entry = entryAlias(this, 'Entry', props.gateFunction, PUSH_RECORDS_ALIAS);
    this.rule = new events.Rule(this, 'PutImage', {
      description: 'sluice: record who pushed each image digest (gates with preventSelfApproval)',
      eventPattern: {
        source: ['aws.ecr'],
        detailType: ['AWS API Call via CloudTrail'],
        detail: {
          eventSource: ['ecr.amazonaws.com'],
          eventName: ['PutImage'],
          errorCode: [{ exists: false }],
        },
      },
      targets: [
        new targets.LambdaFunction(this.entry, {
          retryAttempts: 2,
          maxEventAge: Duration.hours(1),
          deadLetterQueue: props.deadLetterQueue,
        }),
      ],
    });
  }
}
