import { parseEcrHost } from '../functions/core/oci/ecr-host.ts';
import { parseReference } from '../functions/core/oci/reference.ts';

/** An ECR repository a delivery pulls from, as IAM and EventBridge name it. */
export interface EcrRepository {
  readonly account: string;
  readonly region: string;
  readonly partition: string;
  /** The repository name, e.g. `team/app`. */
  readonly repositoryName: string;
  readonly repositoryArn: string;
}

/** The ECR repository of an `oci://<account>.dkr.ecr.<region>.amazonaws.com/<repository>` URL, else undefined. */
export function ecrRepositoryOf(url: string): EcrRepository | undefined {
  let reference;
  try {
    reference = parseReference(url);
  } catch {
    return undefined;
  }
  const ecr = parseEcrHost(reference.host);
  if (!ecr) return undefined;
  const { account, region, partition } = ecr;
  const repositoryName = reference.repository;
  return {
    account,
    region,
    partition,
    repositoryName,
    repositoryArn: `arn:${partition}:ecr:${region}:${account}:repository/${repositoryName}`,
  };
}
