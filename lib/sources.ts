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

const ECR_HOST = /^(\d{12})\.dkr\.ecr(?:-fips)?\.([a-z0-9-]+)\.amazonaws\.com(\.cn)?$/;

/** The ECR repository of an `oci://<account>.dkr.ecr.<region>.amazonaws.com/<repository>` URL, else undefined. */
export function ecrRepositoryOf(url: string): EcrRepository | undefined {
  let reference;
  try {
    reference = parseReference(url);
  } catch {
    return undefined;
  }
  const match = ECR_HOST.exec(reference.host);
  if (!match) return undefined;
  const [, account, region, china] = match as unknown as [string, string, string, string | undefined];
  const partition = china ? 'aws-cn' : 'aws';
  const repositoryName = reference.repository;
  return {
    account,
    region,
    partition,
    repositoryName,
    repositoryArn: `arn:${partition}:ecr:${region}:${account}:repository/${repositoryName}`,
  };
}
