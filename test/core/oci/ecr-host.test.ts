// One reading of an ECR registry host, used by the config's default provider, the runtime's
// credentials and the CDK construct's grants and push rules alike: a table of every form.
import { describe, expect, it } from 'vitest';
import { parseDelivery } from '../../../functions/core/config/index.ts';
import { parseEcrHost } from '../../../functions/core/oci/ecr-host.ts';
import { providerOf } from '../../../functions/core/oci/credentials.ts';
import { ecrRepositoryOf } from '../../../lib/sources.ts';

const ECR_HOSTS = [
  // host, account, region, partition, fips, dual-stack
  ['123456789012.dkr.ecr.eu-west-1.amazonaws.com', '123456789012', 'eu-west-1', 'aws', false, false],
  ['123456789012.dkr.ecr-fips.us-east-1.amazonaws.com', '123456789012', 'us-east-1', 'aws', true, false],
  ['123456789012.dkr-ecr.eu-west-1.on.aws', '123456789012', 'eu-west-1', 'aws', false, true],
  ['123456789012.dkr-ecr-fips.us-east-2.on.aws', '123456789012', 'us-east-2', 'aws', true, true],
  ['123456789012.dkr.ecr.cn-north-1.amazonaws.com.cn', '123456789012', 'cn-north-1', 'aws-cn', false, false],
  [
    '123456789012.dkr-ecr.cn-northwest-1.on.amazonwebservices.com.cn',
    '123456789012',
    'cn-northwest-1',
    'aws-cn',
    false,
    true,
  ],
  [
    '123456789012.dkr.ecr.us-gov-west-1.amazonaws.com',
    '123456789012',
    'us-gov-west-1',
    'aws-us-gov',
    false,
    false,
  ],
  [
    '123456789012.dkr.ecr-fips.us-gov-east-1.amazonaws.com',
    '123456789012',
    'us-gov-east-1',
    'aws-us-gov',
    true,
    false,
  ],
  ['123456789012.dkr.ecr.us-iso-east-1.c2s.ic.gov', '123456789012', 'us-iso-east-1', 'aws-iso', false, false],
  [
    '123456789012.dkr.ecr.us-isob-east-1.sc2s.sgov.gov',
    '123456789012',
    'us-isob-east-1',
    'aws-iso-b',
    false,
    false,
  ],
  ['123456789012.dkr.ecr.eu-west-1.amazonaws.com:443', '123456789012', 'eu-west-1', 'aws', false, false],
] as const;

const NOT_ECR = [
  'ghcr.io',
  '127.0.0.1:5000',
  'registry.example.com',
  '12345678901.dkr.ecr.eu-west-1.amazonaws.com', // 11 digits
  '123456789012.dkr.ecr.eu-west-1.amazonaws.com.evil.example', // a suffix
  'evil.123456789012.dkr.ecr.eu-west-1.amazonaws.com', // a prefix
  '123456789012.dkr.ecr.cn-north-1.amazonaws.com', // a China region on the global domain
  '123456789012.dkr.ecr.eu-west-1.amazonaws.com.cn', // a global region on the China domain
  '123456789012.dkr.ecr.eu-west-1.on.aws', // dual-stack domain, classic name
  '123456789012.dkr-ecr.eu-west-1.amazonaws.com', // classic domain, dual-stack name
  '123456789012.dkr.ecr.us-iso-east-1.amazonaws.com', // an ISO region on the global domain
];

describe('parseEcrHost', () => {
  it.each(ECR_HOSTS)('%s', (host, account, region, partition, fips, dualStack) => {
    expect(parseEcrHost(host)).toEqual({ account, region, partition, fips, dualStack });
  });

  it.each(NOT_ECR)('%s is not an ECR host', (host) => {
    expect(parseEcrHost(host)).toBeUndefined();
  });
});

describe('the config, the runtime and the construct agree on every host', () => {
  const deliveryOf = (host: string) =>
    parseDelivery({
      name: 'app',
      source: { url: `oci://${host}/team/app` },
      cluster: { eks: { name: 'prod', region: 'eu-west-1' } },
    });

  it.each(ECR_HOSTS)(
    '%s: provider aws everywhere, and the construct grants and watches its repository',
    (host, account, region, partition) => {
      expect(deliveryOf(host).source.provider).toBe('aws');
      expect(providerOf({ url: `oci://${host}/team/app` })).toBe('aws');
      expect(ecrRepositoryOf(`oci://${host}/team/app`)).toEqual({
        account,
        region,
        partition,
        repositoryName: 'team/app',
        repositoryArn: `arn:${partition}:ecr:${region}:${account}:repository/team/app`,
      });
    },
  );

  it.each(NOT_ECR)('%s: provider generic everywhere, and the construct grants nothing', (host) => {
    expect(deliveryOf(host).source.provider).toBe('generic');
    expect(providerOf({ url: `oci://${host}/team/app` })).toBe('generic');
    expect(ecrRepositoryOf(`oci://${host}/team/app`)).toBeUndefined();
  });
});
