/** What an Amazon ECR registry host says: whose registry, where, and through which endpoint. */
export interface EcrHost {
  readonly account: string;
  readonly region: string;
  /** The AWS partition, for ARNs: `aws`, `aws-cn`, `aws-us-gov`, `aws-iso`, `aws-iso-b`. */
  readonly partition: string;
  /** A FIPS endpoint (`dkr.ecr-fips`, `dkr-ecr-fips`). */
  readonly fips: boolean;
  /** A dual-stack (IPv4 and IPv6) endpoint (`dkr-ecr…on.aws`). */
  readonly dualStack: boolean;
}

// <account>.dkr.ecr[-fips].<region>.<domain>  or  <account>.dkr-ecr[-fips].<region>.<dual-stack domain>
const ECR_HOST =
  /^(\d{12})\.(dkr\.ecr|dkr-ecr)(-fips)?\.([a-z]{2}(?:-[a-z]+)+-\d+)\.((?:amazonaws\.com(?:\.cn)?)|c2s\.ic\.gov|sc2s\.sgov\.gov|on\.aws|on\.amazonwebservices\.com\.cn)$/;

/** The partition of a region, from its prefix. */
export function partitionOfRegion(region: string): string {
  if (region.startsWith('cn-')) return 'aws-cn';
  if (region.startsWith('us-gov-')) return 'aws-us-gov';
  if (region.startsWith('us-isob-')) return 'aws-iso-b';
  if (region.startsWith('us-iso-')) return 'aws-iso';
  return 'aws';
}

/** The domains each partition's ECR registries use: [classic, dual-stack]. */
const DOMAINS: Record<string, readonly [string, string | undefined]> = {
  aws: ['amazonaws.com', 'on.aws'],
  'aws-us-gov': ['amazonaws.com', 'on.aws'],
  'aws-cn': ['amazonaws.com.cn', 'on.amazonwebservices.com.cn'],
  'aws-iso': ['c2s.ic.gov', undefined],
  'aws-iso-b': ['sc2s.sgov.gov', undefined],
};

/**
 * The one reading of an ECR registry host, in every partition (aws, aws-cn, aws-us-gov, aws-iso,
 * aws-iso-b), FIPS and dual-stack included; a `:port` is ignored. Undefined for any other host,
 * including a domain that does not belong to the region's partition.
 */
export function parseEcrHost(host: string): EcrHost | undefined {
  const match = ECR_HOST.exec(host.replace(/:\d+$/, ''));
  if (!match) return undefined;
  const [, account, service, fips, region, domain] = match as unknown as [
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  const partition = partitionOfRegion(region);
  const dualStack = service === 'dkr-ecr';
  const [classic, dual] = DOMAINS[partition]!;
  if (domain !== (dualStack ? dual : classic)) return undefined;
  return { account, region, partition, fips: fips !== undefined, dualStack };
}

/** True for an ECR registry host (provider `aws` pulls from it with ECR credentials). */
export const isEcrHost = (host: string): boolean => parseEcrHost(host) !== undefined;
