import { Duration } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import type { Delivery } from '../functions/core/config/index.ts';
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
}

/**
 * An EventBridge rule per ECR repository on successful pushes, invoking the reconcile function with
 * the event (it reconciles every delivery of that repository). ECR sends these events to the
 * default bus of the repository's own account and region.
 */
export class EcrPushTriggers extends Construct {
  readonly rules: events.Rule[] = [];

  constructor(scope: Construct, id: string, props: EcrPushTriggersProps) {
    super(scope, id);
    for (const repository of props.repositories) {
      const id = `${repository.account}-${repository.region}-${repository.repositoryName.replace(/\//g, '--')}`;
      this.rules.push(
        new events.Rule(this, id, {
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
            }),
          ],
        }),
      );
    }
  }
}
