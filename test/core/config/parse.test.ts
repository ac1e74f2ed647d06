import { parse as parseYaml } from 'yaml';
import { describe, expect, it } from 'vitest';
import { issuesOf } from '../../support/config-issues.ts';
import {
  ConfigError,
  DEFAULTS,
  parseConfig,
  parseDelivery,
  parseGate,
  type SluiceConfig,
} from '../../../functions/core/config/index.ts';

const ECR = 'oci://123456789012.dkr.ecr.ap-northeast-1.amazonaws.com/oddy-test';
const DIGEST = `sha256:${'ab'.repeat(32)}`;

/** The config-file example of the seed scenario (the gates no-deploy-friday and sre-approval, the delivery oddy-test), verbatim. */
const SEED_EXAMPLE = `
gates:
  - name: no-deploy-friday
    default: open
    window: 24h
    schedules:
      - { cron: "0 0 ? * FRI *", timeZone: Europe/Berlin, action: close }
  - name: sre-approval
    default: closed
    window: 1h
deliveries:
  - name: oddy-test
    source: { url: "oci://123456789012.dkr.ecr.ap-northeast-1.amazonaws.com/oddy-test", tag: v1 }  # or semver / digest; provider: aws|generic
    path: .
    prune: true
    interval: 5m
    cluster: { eks: { name: prod, region: ap-northeast-1 } }   # or { kubeconfig: ./kubeconfig }
    gates:
      - { name: no-deploy-friday, blocks: revisions }
      - { name: sre-approval, blocks: all }
`;

const GATES = [
  { name: 'no-deploy-friday', default: 'open', window: '24h' },
  { name: 'sre-approval', default: 'closed' },
];

function delivery(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: 'oddy-test',
    source: { url: ECR, tag: 'v1' },
    cluster: { eks: { name: 'prod', region: 'ap-northeast-1' } },
    ...overrides,
  };
}

describe('parseConfig', () => {
  it("normalises the seed scenario's example", () => {
    const expected: SluiceConfig = {
      gates: [
        {
          name: 'no-deploy-friday',
          default: 'open',
          windowMs: 86_400_000,
          schedules: [{ cron: '0 0 ? * FRI *', timeZone: 'Europe/Berlin', action: 'close' }],
          approval: 'any',
          approvers: 1,
        },
        {
          name: 'sre-approval',
          default: 'closed',
          windowMs: 3_600_000,
          schedules: [],
          approval: 'any',
          approvers: 1,
        },
      ],
      deliveries: [
        {
          name: 'oddy-test',
          source: { url: ECR, tag: 'v1', provider: 'aws', insecure: false },
          path: '.',
          prune: true,
          intervalMs: 300_000,
          timeoutMs: 300_000,
          wait: false,
          suspend: false,
          cluster: { eks: { name: 'prod', region: 'ap-northeast-1' } },
          gates: [
            { name: 'no-deploy-friday', blocks: 'revisions' },
            { name: 'sre-approval', blocks: 'all' },
          ],
          dependsOn: [],
          deletionPolicy: 'Delete',
          allowEmpty: false,
        },
      ],
      rollouts: [],
    };
    expect(parseConfig(parseYaml(SEED_EXAMPLE))).toStrictEqual(expected);
  });

  it("takes dependsOn as names or as Flux's { name } objects", () => {
    const config = parseConfig({
      deliveries: [
        delivery({ name: 'infra' }),
        delivery({ dependsOn: ['infra'] }),
        delivery({ name: 'apps', dependsOn: [{ name: 'infra' }, 'oddy-test'] }),
      ],
    });
    expect(config.deliveries.map((d) => [d.name, d.dependsOn])).toEqual([
      ['infra', []],
      ['oddy-test', [{ name: 'infra' }]],
      ['apps', [{ name: 'infra' }, { name: 'oddy-test' }]],
    ]);
  });

  it('takes a soak on a dependency, in milliseconds', () => {
    const config = parseConfig({
      deliveries: [
        delivery({ name: 'staging' }),
        delivery({ dependsOn: [{ name: 'staging', soak: '30m' }] }),
      ],
    });
    expect(config.deliveries[1]!.dependsOn).toStrictEqual([{ name: 'staging', soakMs: 30 * 60_000 }]);
  });

  it("takes a gate's CloudWatch alarms, INSUFFICIENT_DATA closed unless said otherwise", () => {
    const arn = 'arn:aws:cloudwatch:eu-west-1:123456789012:alarm:checkout errors: 5xx';
    const config = parseConfig({
      gates: [
        { name: 'healthy', default: 'open', alarms: ['checkout-errors', arn] },
        { name: 'lenient', default: 'open', alarms: ['latency'], insufficientData: 'open' },
        { name: 'plain', default: 'open' },
      ],
    });
    expect(
      config.gates.map(({ name, alarms, insufficientData }) => ({ name, alarms, insufficientData })),
    ).toEqual([
      { name: 'healthy', alarms: ['checkout-errors', arn], insufficientData: 'closed' },
      { name: 'lenient', alarms: ['latency'], insufficientData: 'open' },
      { name: 'plain', alarms: undefined, insufficientData: undefined },
    ]);
  });

  it('defaults both lists to empty', () => {
    expect(parseConfig({})).toEqual({ gates: [], deliveries: [], rollouts: [] });
  });

  it('fills in delivery defaults', () => {
    const parsed = parseDelivery({
      name: 'web',
      source: { url: 'oci://localhost:5000/team/web' },
      cluster: { kubeconfig: './kubeconfig', context: 'kind' },
    });
    expect(parsed).toStrictEqual({
      name: 'web',
      source: { url: 'oci://localhost:5000/team/web', tag: 'latest', provider: 'generic', insecure: false },
      path: '.',
      prune: false,
      intervalMs: DEFAULTS.intervalMs,
      timeoutMs: DEFAULTS.timeoutMs,
      wait: false,
      suspend: false,
      cluster: { kubeconfig: './kubeconfig', context: 'kind' },
      gates: [],
      dependsOn: [],
      deletionPolicy: 'Orphan',
      allowEmpty: false,
    });
  });

  it('keeps every optional field', () => {
    const parsed = parseDelivery(
      delivery({
        source: {
          url: 'oci://registry.example.com/apps/web',
          semver: '^1.4',
          provider: 'aws',
          insecure: true,
          layerMediaType: 'application/vnd.cncf.flux.content.v1.tar+gzip',
        },
        path: './overlays//prod/',
        prune: true,
        deletionPolicy: 'Orphan',
        interval: '10m',
        retryInterval: '1m',
        timeout: '2m30s',
        wait: true,
        suspend: true,
        allowEmpty: true,
        cluster: {
          eks: { name: 'prod', region: 'cn-north-1', roleArn: 'arn:aws-cn:iam::123456789012:role/deploy' },
        },
        gates: [{ name: 'sre-approval' }],
        dependsOn: ['infra'],
        targetNamespace: 'web',
        commonMetadata: {
          labels: { 'app.kubernetes.io/part-of': 'shop', team: '' },
          annotations: { note: 'any text!' },
        },
        postBuild: { substitute: { cluster_env: 'prod' } },
      }),
    );
    expect(parsed).toStrictEqual({
      name: 'oddy-test',
      source: {
        url: 'oci://registry.example.com/apps/web',
        semver: '^1.4',
        provider: 'aws',
        insecure: true,
        layerMediaType: 'application/vnd.cncf.flux.content.v1.tar+gzip',
      },
      path: 'overlays/prod',
      prune: true,
      intervalMs: 600_000,
      retryIntervalMs: 60_000,
      timeoutMs: 150_000,
      wait: true,
      suspend: true,
      cluster: {
        eks: { name: 'prod', region: 'cn-north-1', roleArn: 'arn:aws-cn:iam::123456789012:role/deploy' },
      },
      gates: [{ name: 'sre-approval', blocks: 'all' }],
      dependsOn: [{ name: 'infra' }],
      deletionPolicy: 'Orphan',
      allowEmpty: true,
      targetNamespace: 'web',
      commonMetadata: {
        labels: { 'app.kubernetes.io/part-of': 'shop', team: '' },
        annotations: { note: 'any text!' },
      },
      postBuild: { substitute: { cluster_env: 'prod' } },
    });
  });

  it.each([
    ['oci://123456789012.dkr.ecr.eu-west-1.amazonaws.com/a/b', 'aws'],
    ['oci://123456789012.dkr.ecr.cn-north-1.amazonaws.com.cn/a', 'aws'],
    ['oci://ghcr.io/stefanprodan/manifests/podinfo', 'generic'],
    ['oci://127.0.0.1:5000/a', 'generic'],
    ['oci://12345.dkr.ecr.eu-west-1.amazonaws.com/a', 'generic'],
  ])('detects the provider of %s', (url, provider) => {
    expect(parseDelivery(delivery({ source: { url } })).source.provider).toBe(provider);
  });

  it('keeps a digest as the only reference', () => {
    expect(parseDelivery(delivery({ source: { url: ECR, digest: DIGEST } })).source).toStrictEqual({
      url: ECR,
      digest: DIGEST,
      provider: 'aws',
      insecure: false,
    });
  });

  it('normalises schedules: cron(...) unwrapped, time zone UTC by default, window in ms', () => {
    expect(
      parseGate({
        name: 'maintenance',
        default: 'closed',
        description: 'Tuesday night maintenance',
        schedules: [
          { cron: 'cron(0  22 ? * TUE *)', action: 'open', window: '2h' },
          { cron: '0 0 1 * ? *', timeZone: 'Asia/Tokyo', action: 'close' },
        ],
      }),
    ).toStrictEqual({
      name: 'maintenance',
      default: 'closed',
      description: 'Tuesday night maintenance',
      schedules: [
        { cron: '0 22 ? * TUE *', timeZone: 'UTC', action: 'open', windowMs: 7_200_000 },
        { cron: '0 0 1 * ? *', timeZone: 'Asia/Tokyo', action: 'close' },
      ],
      approval: 'any',
      approvers: 1,
    });
  });

  it('bounds gate windows to a year, approvers to six and maxOverride to a day, naming the field', () => {
    const problems = (gate: Record<string, unknown>) => {
      try {
        parseGate({ name: 'g', default: 'closed', ...gate });
        return [];
      } catch (error) {
        return (error as ConfigError).issues.map((issue) => `${issue.path}: ${issue.message}`);
      }
    };
    expect(problems({ window: '367d' })).toEqual([
      'window: must be at most 366d (a year): a request lasting longer is a mistake',
    ]);
    expect(problems({ schedules: [{ cron: '0 0 ? * FRI *', action: 'close', window: '400d' }] })).toEqual([
      'schedules[0].window: must be at most 366d (a year): a request lasting longer is a mistake',
    ]);
    expect(problems({ window: '366d', approvers: 6 })).toEqual([]);
    expect(problems({ approvers: 7 })).toEqual(['approvers: must be at most 6']);
    expect(problems({ approvers: 1.5 })).toEqual(['approvers: must be a whole number']);
    expect(problems({ maxOverride: '25h' })).toEqual([
      'maxOverride: must be at most 1d: a longer override is not break-glass (change the gate instead)',
    ]);
    expect(parseGate({ name: 'g', default: 'closed', maxOverride: '30m' }).maxOverrideMs).toBe(1_800_000);
    expect(parseGate({ name: 'g', default: 'closed' })).not.toHaveProperty('maxOverrideMs');
  });

  it('sessionNamedRoles takes role ARNs only: a bare name would match a role of that name in any account', () => {
    const issues = (roles: string[]) => {
      try {
        parseGate({ name: 'g', default: 'closed', approvers: 2, sessionNamedRoles: roles });
        return [];
      } catch (error) {
        return (error as ConfigError).issues.map((issue) => `${issue.path}: ${issue.message}`);
      }
    };
    expect(issues(['arn:aws:iam::123456789012:role/teams/Approver'])).toEqual([]);
    expect(issues(['Approver'])).toEqual([
      'sessionNamedRoles[0]: must be a role ARN (arn:aws:iam::<account>:role/<name>): a bare name would match a role of that name in any account',
    ]);
  });

  it('reads requireVerified: a boolean, kept only when true', () => {
    expect(parseGate({ name: 'g', default: 'closed', requireVerified: true })).toMatchObject({
      requireVerified: true,
    });
    expect(parseGate({ name: 'g', default: 'closed', requireVerified: false })).not.toHaveProperty(
      'requireVerified',
    );
    expect(() => parseGate({ name: 'g', default: 'closed', requireVerified: 'yes' })).toThrow(
      /requireVerified/,
    );
  });

  it("reads Flux's decryption (provider sops) and names each wrong field", () => {
    const KEY = 'arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab';
    const SECRET = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:sluice/age-AbCdEf';
    const delivery = (decryption: unknown) =>
      parseDelivery({ name: 'd', source: { url: ECR }, cluster: { kubeconfig: 'k' }, decryption });
    const problems = (decryption: unknown) => {
      try {
        delivery(decryption);
        return [];
      } catch (error) {
        return (error as ConfigError).issues.map((issue) => `${issue.path}: ${issue.message}`);
      }
    };
    expect(delivery({ provider: 'sops', ageKeySecretArn: SECRET }).decryption).toEqual({
      provider: 'sops',
      kmsKeyArns: [],
      ageKeySecretArn: SECRET,
    });
    expect(delivery({ provider: 'sops', kmsKeyArns: [KEY] }).decryption).toEqual({
      provider: 'sops',
      kmsKeyArns: [KEY],
    });
    expect(problems({ provider: 'pgp', kmsKeyArns: [KEY] })).toEqual([
      'decryption.provider: the only provider is "sops"',
    ]);
    expect(problems({ provider: 'sops' })).toEqual([
      'decryption: name the keys: kmsKeyArns (KMS key ARNs) and/or ageKeySecretArn (age identities)',
    ]);
    expect(
      problems({ provider: 'sops', kmsKeyArns: ['arn:aws:kms:eu-west-1:123456789012:alias/sops'] }),
    ).toEqual([
      'decryption.kmsKeyArns[0]: "arn:aws:kms:eu-west-1:123456789012:alias/sops" is not a KMS key ARN (arn:aws:kms:<region>:<account>:key/<key id>; not an alias: IAM grants kms:Decrypt on keys)',
    ]);
    expect(problems({ provider: 'sops', ageKeySecretArn: 'sluice/age' })).toEqual([
      'decryption.ageKeySecretArn: "sluice/age" is not a Secrets Manager secret ARN (arn:aws:secretsmanager:<region>:<account>:secret:<name>)',
    ]);
  });

  it('a gate that approves revisions or needs several approvers is closed by default and has no open schedules', () => {
    const error = (() => {
      try {
        parseGate({
          name: 'g',
          default: 'open',
          approval: 'revision',
          schedules: [{ cron: '0 9 ? * MON *', action: 'open' }],
        });
      } catch (caught) {
        return caught as ConfigError;
      }
      throw new Error('expected a ConfigError');
    })();
    expect(error.issues.map((issue) => `${issue.path}: ${issue.message}`)).toEqual([
      'default: a gate with approval: revision must be closed by default: open by default, it would let everything through unapproved',
      'schedules[0].action: a gate with approval: revision cannot have open schedules: a schedule approves nothing',
    ]);
    expect(parseGate({ name: 'g', default: 'closed', approvers: 2 })).toMatchObject({
      approval: 'any',
      approvers: 2,
    });
  });

  it('does not check gate references for a single delivery', () => {
    expect(parseDelivery(delivery({ gates: [{ name: 'elsewhere' }] })).gates).toEqual([
      { name: 'elsewhere', blocks: 'all' },
    ]);
  });
});

describe('invalid configs', () => {
  const D = 'deliveries[oddy-test]';
  const cases: [string, unknown, string, string][] = [
    ['missing name', { deliveries: [delivery({ name: undefined })] }, 'deliveries[0].name', 'is required'],
    [
      'bad name',
      { deliveries: [delivery({ name: 'Oddy_Test' })] },
      'deliveries[0].name',
      '"Oddy_Test" is not a valid delivery name: use at most 63 lowercase letters, digits and "-", starting and ending with a letter or digit',
    ],
    [
      'name too long',
      { deliveries: [delivery({ name: 'a'.repeat(64) })] },
      'deliveries[0].name',
      `"${'a'.repeat(64)}" is not a valid delivery name`,
    ],
    [
      'url without oci://',
      { deliveries: [delivery({ source: { url: 'https://ghcr.io/a/b' } })] },
      `${D}.source.url`,
      '"https://ghcr.io/a/b" must start with oci://',
    ],
    [
      'url without repository',
      { deliveries: [delivery({ source: { url: 'oci://ghcr.io' } })] },
      `${D}.source.url`,
      '"oci://ghcr.io" has no repository (expected oci://host/repository)',
    ],
    [
      'url without host',
      { deliveries: [delivery({ source: { url: 'oci:///a' } })] },
      `${D}.source.url`,
      '"oci:///a" has no registry host',
    ],
    [
      'url with a tag',
      { deliveries: [delivery({ source: { url: `${ECR}:v1` } })] },
      `${D}.source.url`,
      'must not include a tag or digest; set source.tag, source.semver or source.digest instead',
    ],
    [
      'url with upper-case repository',
      { deliveries: [delivery({ source: { url: 'oci://ghcr.io/Team/App' } })] },
      `${D}.source.url`,
      'has an invalid repository "Team/App"',
    ],
    [
      'two of tag/semver/digest',
      { deliveries: [delivery({ source: { url: ECR, tag: 'v1', semver: '^1' } })] },
      `${D}.source`,
      'set only one of tag, semver and digest (found tag and semver)',
    ],
    [
      'bad digest',
      { deliveries: [delivery({ source: { url: ECR, digest: 'sha256:abc' } })] },
      `${D}.source.digest`,
      '"sha256:abc" is not a digest: expected sha256: followed by 64 lowercase hex digits',
    ],
    [
      'bad semver',
      { deliveries: [delivery({ source: { url: ECR, semver: 'latest' } })] },
      `${D}.source.semver`,
      '"latest" is not a valid semver range',
    ],
    [
      'bad tag',
      { deliveries: [delivery({ source: { url: ECR, tag: '-v1' } })] },
      `${D}.source.tag`,
      '"-v1" is not a valid tag',
    ],
    [
      'number tag (unquoted YAML)',
      { deliveries: [delivery({ source: { url: ECR, tag: 1.1 } })] },
      `${D}.source.tag`,
      'must be a string, not the number 1.1 (quote it in YAML: "1.1")',
    ],
    [
      'unknown provider',
      { deliveries: [delivery({ source: { url: ECR, provider: 'gcp' } })] },
      `${D}.source.provider`,
      'must be one of aws, generic, not "gcp"',
    ],
    [
      'bad layer media type',
      { deliveries: [delivery({ source: { url: ECR, layerMediaType: 'tar' } })] },
      `${D}.source.layerMediaType`,
      '"tar" is not a media type',
    ],
    [
      'unknown field',
      { deliveries: [delivery({ prunne: true })] },
      D,
      'unknown field "prunne" (did you mean "prune"?)',
    ],
    [
      'unknown field without a near match',
      { deliveries: [delivery({ colour: 'red' })] },
      D,
      'unknown field "colour"',
    ],
    [
      'unknown top-level field',
      { delivery: [] },
      '',
      'unknown field "delivery" (did you mean "deliveries"?)',
    ],
    [
      'unknown nested field',
      { deliveries: [delivery({ source: { url: ECR, tags: 'v1' } })] },
      `${D}.source`,
      'unknown field "tags" (did you mean "tag"?)',
    ],
    [
      'cluster with eks and kubeconfig',
      {
        deliveries: [
          delivery({ cluster: { eks: { name: 'prod', region: 'eu-west-1' }, kubeconfig: './k' } }),
        ],
      },
      `${D}.cluster`,
      'set either eks or kubeconfig, not both',
    ],
    [
      'cluster with neither',
      { deliveries: [delivery({ cluster: {} })] },
      `${D}.cluster`,
      'set either eks: { name, region } or kubeconfig: <path to a kubeconfig file>',
    ],
    ['missing cluster', { deliveries: [delivery({ cluster: undefined })] }, `${D}.cluster`, 'is required'],
    [
      'context without kubeconfig',
      { deliveries: [delivery({ cluster: { eks: { name: 'prod', region: 'eu-west-1' }, context: 'x' } })] },
      `${D}.cluster.context`,
      'only applies with kubeconfig',
    ],
    [
      'missing eks region',
      { deliveries: [delivery({ cluster: { eks: { name: 'prod' } } })] },
      `${D}.cluster.eks.region`,
      'is required',
    ],
    [
      'bad region',
      { deliveries: [delivery({ cluster: { eks: { name: 'prod', region: 'tokyo' } } })] },
      `${D}.cluster.eks.region`,
      '"tokyo" is not an AWS region (e.g. eu-west-1)',
    ],
    [
      'bad role ARN',
      {
        deliveries: [
          delivery({
            cluster: {
              eks: { name: 'prod', region: 'eu-west-1', roleArn: 'arn:aws:iam::123456789012:user/bob' },
            },
          }),
        ],
      },
      `${D}.cluster.eks.roleArn`,
      'is not an IAM role ARN',
    ],
    [
      'unknown gate reference',
      { gates: GATES, deliveries: [delivery({ gates: [{ name: 'sre-aproval' }] })] },
      `${D}.gates[sre-aproval].name`,
      'delivery "oddy-test" references gate "sre-aproval", which is not defined in gates (did you mean "sre-approval"? defined: no-deploy-friday, sre-approval)',
    ],
    [
      'gate reference without gates',
      { deliveries: [delivery({ gates: [{ name: 'freeze' }] })] },
      `${D}.gates[freeze].name`,
      'delivery "oddy-test" references gate "freeze", which is not defined in gates (no gates are defined)',
    ],
    [
      'gate referenced twice',
      {
        gates: GATES,
        deliveries: [
          delivery({ gates: [{ name: 'sre-approval' }, { name: 'sre-approval', blocks: 'revisions' }] }),
        ],
      },
      `${D}.gates[1].name`,
      'gate "sre-approval" is listed more than once',
    ],
    [
      'bad blocks scope',
      { gates: GATES, deliveries: [delivery({ gates: [{ name: 'sre-approval', blocks: 'everything' }] })] },
      `${D}.gates[sre-approval].blocks`,
      'must be one of all, revisions, not "everything"',
    ],
    [
      'duplicate delivery names',
      { deliveries: [delivery(), delivery()] },
      'deliveries[1].name',
      'duplicate delivery name "oddy-test" (also deliveries[0])',
    ],
    [
      'duplicate gate names',
      { gates: [...GATES, { name: 'sre-approval', default: 'open' }] },
      'gates[2].name',
      'duplicate gate name "sre-approval" (also gates[1])',
    ],
    [
      'path with ..',
      { deliveries: [delivery({ path: 'apps/../../etc' })] },
      `${D}.path`,
      '"apps/../../etc" must not contain ".."',
    ],
    [
      'absolute path',
      { deliveries: [delivery({ path: '/apps' })] },
      `${D}.path`,
      '"/apps" must be relative to the artifact root (no leading "/")',
    ],
    ['empty path', { deliveries: [delivery({ path: '' })] }, `${D}.path`, 'must not be empty'],
    [
      'bad interval',
      { deliveries: [delivery({ interval: '5 minutes' })] },
      `${D}.interval`,
      '"5 minutes" is not a duration (use e.g. 30s, 5m, 24h, 7d)',
    ],
    [
      'interval without unit',
      { deliveries: [delivery({ interval: 300 })] },
      `${D}.interval`,
      '300 is not a duration: the number needs a unit (ms, s, m, h or d), e.g. 300s',
    ],
    [
      'zero timeout',
      { deliveries: [delivery({ timeout: '0s' })] },
      `${D}.timeout`,
      'must be longer than zero',
    ],
    [
      'negative retry interval',
      { deliveries: [delivery({ retryInterval: '-1m' })] },
      `${D}.retryInterval`,
      '"-1m" is not a duration: it must not be negative',
    ],
    [
      'boolean as a string',
      { deliveries: [delivery({ prune: 'yes' })] },
      `${D}.prune`,
      'must be true or false, not "yes"',
    ],
    [
      'bad deletion policy',
      { deliveries: [delivery({ deletionPolicy: 'delete' })] },
      `${D}.deletionPolicy`,
      'must be one of Delete, Orphan, not "delete"',
    ],
    [
      'bad target namespace',
      { deliveries: [delivery({ targetNamespace: 'Prod' })] },
      `${D}.targetNamespace`,
      '"Prod" is not a valid namespace name',
    ],
    [
      'bad label key',
      { deliveries: [delivery({ commonMetadata: { labels: { 'bad key': 'x' } } })] },
      `${D}.commonMetadata.labels["bad key"]`,
      '"bad key" is not a valid label key',
    ],
    [
      'bad label value',
      { deliveries: [delivery({ commonMetadata: { labels: { team: 'a b' } } })] },
      `${D}.commonMetadata.labels.team`,
      '"a b" is not a valid label value',
    ],
    [
      'bad substitution variable',
      { deliveries: [delivery({ postBuild: { substitute: { 'cluster-env': 'prod' } } })] },
      `${D}.postBuild.substitute["cluster-env"]`,
      '"cluster-env" is not a valid variable name',
    ],
    ['deliveries not a list', { deliveries: { name: 'x' } }, 'deliveries', 'must be a list, not an object'],
    [
      'empty source',
      { deliveries: [delivery({ source: null })] },
      `${D}.source`,
      'has no value (expected an object)',
    ],
    [
      'bad gate default',
      { gates: [{ name: 'freeze', default: 'opened' }] },
      'gates[freeze].default',
      'must be one of open, closed, not "opened"',
    ],
    ['missing gate default', { gates: [{ name: 'freeze' }] }, 'gates[freeze].default', 'is required'],
    [
      'bad gate name',
      { gates: [{ name: 'Freeze!', default: 'open' }] },
      'gates[0].name',
      '"Freeze!" is not a valid gate name',
    ],
    [
      'bad gate window',
      { gates: [{ name: 'freeze', default: 'open', window: '1 day' }] },
      'gates[freeze].window',
      '"1 day" is not a duration',
    ],
    [
      'cron with five fields',
      { gates: [{ name: 'freeze', default: 'open', schedules: [{ cron: '0 0 * * 5', action: 'close' }] }] },
      'gates[freeze].schedules[0].cron',
      '"0 0 * * 5" has 5 fields; an EventBridge cron expression has six: minutes hours day-of-month month day-of-week year (e.g. "0 0 ? * FRI *")',
    ],
    [
      'cron without ?',
      {
        gates: [{ name: 'freeze', default: 'open', schedules: [{ cron: '0 0 * * FRI *', action: 'close' }] }],
      },
      'gates[freeze].schedules[0].cron',
      '"0 0 * * FRI *": one of day-of-month and day-of-week must be "?"',
    ],
    [
      'cron with two ?',
      { gates: [{ name: 'freeze', default: 'open', schedules: [{ cron: '0 0 ? * ? *', action: 'close' }] }] },
      'gates[freeze].schedules[0].cron',
      'day-of-month and day-of-week cannot both be "?"',
    ],
    [
      'rate expression',
      {
        gates: [
          { name: 'freeze', default: 'open', schedules: [{ cron: 'rate(5 minutes)', action: 'close' }] },
        ],
      },
      'gates[freeze].schedules[0].cron',
      'only cron expressions are supported, not rate() or at()',
    ],
    [
      'bad time zone',
      {
        gates: [
          {
            name: 'freeze',
            default: 'open',
            schedules: [{ cron: '0 0 ? * FRI *', timeZone: 'Europe/Bonn', action: 'close' }],
          },
        ],
      },
      'gates[freeze].schedules[0].timeZone',
      '"Europe/Bonn" is not an IANA time zone (e.g. UTC, Europe/Berlin)',
    ],
    [
      'bad action',
      {
        gates: [
          { name: 'freeze', default: 'open', schedules: [{ cron: '0 0 ? * FRI *', action: 'closed' }] },
        ],
      },
      'gates[freeze].schedules[0].action',
      'must be one of open, close, not "closed"',
    ],
    [
      'schedule window without unit',
      {
        gates: [
          {
            name: 'freeze',
            default: 'open',
            schedules: [{ cron: '0 0 ? * FRI *', action: 'close', window: 24 }],
          },
        ],
      },
      'gates[freeze].schedules[0].window',
      '24 is not a duration',
    ],
    [
      'dependency not in the config',
      { deliveries: [delivery({ dependsOn: ['infar'] }), delivery({ name: 'infra' })] },
      `${D}.dependsOn[0]`,
      'delivery "oddy-test" depends on "infar", which is not defined in deliveries (did you mean "infra"?)',
    ],
    [
      'dependency on itself',
      { deliveries: [delivery({ dependsOn: ['oddy-test'] })] },
      `${D}.dependsOn[0]`,
      'delivery "oddy-test" cannot depend on itself',
    ],
    [
      'dependency listed twice',
      { deliveries: [delivery({ dependsOn: ['infra', { name: 'infra' }] }), delivery({ name: 'infra' })] },
      `${D}.dependsOn[infra]`,
      '"infra" is listed twice',
    ],
    [
      'soak without a unit',
      { deliveries: [delivery({ dependsOn: [{ name: 'infra', soak: 30 }] }), delivery({ name: 'infra' })] },
      `${D}.dependsOn[infra].soak`,
      '30 is not a duration',
    ],
    [
      'soak of nothing',
      { deliveries: [delivery({ dependsOn: [{ name: 'infra', soak: '0s' }] }), delivery({ name: 'infra' })] },
      `${D}.dependsOn[infra].soak`,
      'must be longer than zero',
    ],
    [
      'soak too long',
      {
        deliveries: [delivery({ dependsOn: [{ name: 'infra', soak: '31d' }] }), delivery({ name: 'infra' })],
      },
      `${D}.dependsOn[infra].soak`,
      'must be at most 30d: a longer soak is a mistake',
    ],
    [
      'soak misspelt',
      { deliveries: [delivery({ dependsOn: [{ name: 'infra', soke: '5m' }] }), delivery({ name: 'infra' })] },
      `${D}.dependsOn[infra]`,
      'unknown field "soke"',
    ],
    [
      'alarm ARN of another service',
      {
        gates: [{ name: 'freeze', default: 'open', alarms: ['arn:aws:sns:us-east-1:123456789012:alarm:x'] }],
      },
      'gates[freeze].alarms[0]',
      'is not a CloudWatch alarm ARN (arn:aws:cloudwatch:<region>:<account>:alarm:<name>)',
    ],
    [
      'alarm listed twice (name and ARN)',
      {
        gates: [
          {
            name: 'freeze',
            default: 'open',
            alarms: ['errors', 'arn:aws:cloudwatch:us-east-1:123456789012:alarm:errors'],
          },
        ],
      },
      'gates[freeze].alarms[1]',
      'alarm "errors" is listed twice',
    ],
    [
      'alarms empty',
      { gates: [{ name: 'freeze', default: 'open', alarms: [] }] },
      'gates[freeze].alarms',
      'must name at least one alarm (or leave alarms out)',
    ],
    [
      'insufficientData without alarms',
      { gates: [{ name: 'freeze', default: 'open', insufficientData: 'open' }] },
      'gates[freeze].insufficientData',
      'applies only to a gate with alarms',
    ],
    [
      'dependency cycle',
      {
        deliveries: [
          delivery({ dependsOn: ['apps'] }),
          delivery({ name: 'apps', dependsOn: ['infra'] }),
          delivery({ name: 'infra', dependsOn: ['oddy-test'] }),
        ],
      },
      `${D}.dependsOn`,
      'dependsOn forms a cycle: oddy-test → apps → infra → oddy-test',
    ],
    [
      'clusterConcurrency out of range',
      { deliveries: [delivery({ clusterConcurrency: 0 })] },
      `${D}.clusterConcurrency`,
      'must be at least 1',
    ],
    [
      'deliveries on one cluster with different clusterConcurrency',
      { deliveries: [delivery({ name: 'infra', clusterConcurrency: 20 }), delivery()] },
      `${D}.clusterConcurrency`,
      'clusterConcurrency 10, the default differs from delivery "infra" on the same cluster (20): deliveries on one cluster share its limit, so set the same value on each',
    ],
  ];

  it.each(cases)('%s', (_, input, path, message) => {
    const issues = issuesOf(() => parseConfig(input, 'sluice.yaml'));
    expect(issues).toContainEqual({ path, message: expect.stringContaining(message) });
  });

  it('deliveries on different clusters may differ in clusterConcurrency; on one cluster they may agree', () => {
    const other = { eks: { name: 'staging', region: 'ap-northeast-1' } };
    const config = parseConfig(
      {
        deliveries: [
          delivery({ clusterConcurrency: 20 }),
          delivery({ name: 'apps', clusterConcurrency: 20 }),
          delivery({ name: 'tools', cluster: other }),
        ],
      },
      'sluice.yaml',
    );
    expect(config.deliveries.map((d) => d.clusterConcurrency)).toEqual([20, 20, undefined]);
  });

  it('covers many distinct cases', () => {
    expect(new Set(cases.map(([, , path, message]) => `${path}|${message}`)).size).toBe(cases.length);
  });

  it('reports every problem at once, one per line, as origin: path: problem', () => {
    let error: unknown;
    try {
      parseConfig(
        {
          gates: [{ name: 'sre-approval', default: 'shut', window: '1 hour' }],
          deliveries: [
            delivery({
              prunne: true,
              source: { url: 'https://x/y', tag: 'v1', digest: 'sha256:0' },
              cluster: {},
              gates: [{ name: 'nope' }],
            }),
          ],
        },
        'sluice.yaml',
      );
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const { message, issues } = error as ConfigError;
    expect(message.split('\n').sort()).toEqual(
      [
        'sluice.yaml: gates[sre-approval].default: must be one of open, closed, not "shut"',
        'sluice.yaml: gates[sre-approval].window: "1 hour" is not a duration (use e.g. 30s, 5m, 24h, 7d)',
        'sluice.yaml: deliveries[oddy-test].source.url: "https://x/y" must start with oci:// (e.g. oci://123456789012.dkr.ecr.eu-west-1.amazonaws.com/app)',
        'sluice.yaml: deliveries[oddy-test].source.digest: "sha256:0" is not a digest: expected sha256: followed by 64 lowercase hex digits',
        'sluice.yaml: deliveries[oddy-test].source: set only one of tag, semver and digest (found tag and digest)',
        'sluice.yaml: deliveries[oddy-test].cluster: set either eks: { name, region } or kubeconfig: <path to a kubeconfig file>',
        'sluice.yaml: deliveries[oddy-test]: unknown field "prunne" (did you mean "prune"?)',
        'sluice.yaml: deliveries[oddy-test].gates[nope].name: delivery "oddy-test" references gate "nope", which is not defined in gates (defined: sre-approval)',
      ].sort(),
    );
    expect(issues).toHaveLength(8);
    expect((error as ConfigError).name).toBe('ConfigError');
  });

  it('uses the origin "config" by default', () => {
    expect(() => parseConfig({ gates: 'none' })).toThrow('config: gates: must be a list, not "none"');
    expect(() => parseConfig(null)).toThrow('config: has no value (expected an object)');
  });

  it('names single specs by their name, with paths relative to the spec', () => {
    expect(() => parseDelivery(delivery({ wait: 1 }))).toThrow(
      new ConfigError('delivery oddy-test', [
        { path: 'wait', message: 'must be true or false, not the number 1' },
      ]),
    );
    expect(() => parseGate({ name: 'freeze', default: 'open', window: '0s' }, 'GateProps')).toThrow(
      'GateProps: window: must be longer than zero (use e.g. 30s, 5m, 24h, 7d)',
    );
    expect(() => parseGate({})).toThrow('gate: name: is required\ngate: default: is required');
  });
});

describe('delivery patches and images', () => {
  const D = 'deliveries[oddy-test]';
  const smp = 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 3\n';
  const ops = '- op: replace\n  path: /spec/replicas\n  value: 3\n';
  const DIGEST_256 = `sha256:${'c'.repeat(64)}`;

  it('keeps patches (strategic merge, JSON6902 in YAML or JSON, with or without target) and images', () => {
    const parsed = parseDelivery(
      delivery({
        patches: [
          { patch: smp },
          { patch: ops, target: { kind: 'Deployment', name: 'web-.*', labelSelector: 'tier=front' } },
          { patch: '[{"op": "remove", "path": "/spec/replicas"}]', target: { group: 'apps', version: 'v1' } },
          {
            patch: 'kind: Deployment\nmetadata: { name: any }\nspec:\n  replicas: ${replicas}\n',
            target: { annotationSelector: 'example.com/scale=true', namespace: 'shop' },
          },
        ],
        images: [
          { name: 'nginx', newTag: '1.27.3' },
          { name: 'localhost:5000/app', newName: 'ghcr.io/org/app', digest: DIGEST_256 },
          { name: 'ghcr.io/org/worker', newTag: '${version}' },
        ],
      }),
    );
    expect(parsed.patches).toStrictEqual([
      { patch: smp },
      { patch: ops, target: { kind: 'Deployment', name: 'web-.*', labelSelector: 'tier=front' } },
      { patch: '[{"op": "remove", "path": "/spec/replicas"}]', target: { group: 'apps', version: 'v1' } },
      {
        patch: 'kind: Deployment\nmetadata: { name: any }\nspec:\n  replicas: ${replicas}\n',
        target: { annotationSelector: 'example.com/scale=true', namespace: 'shop' },
      },
    ]);
    expect(parsed.images).toStrictEqual([
      { name: 'nginx', newTag: '1.27.3' },
      { name: 'localhost:5000/app', newName: 'ghcr.io/org/app', digest: DIGEST_256 },
      { name: 'ghcr.io/org/worker', newTag: '${version}' },
    ]);
  });

  it('leaves both out when not given', () => {
    const parsed = parseDelivery(delivery());
    expect(parsed).not.toHaveProperty('patches');
    expect(parsed).not.toHaveProperty('images');
  });

  const cases: [string, Record<string, unknown>, string, string][] = [
    ['patch missing', { patches: [{ target: { kind: 'X' } }] }, `${D}.patches[0].patch`, 'is required'],
    ['patch not text', { patches: [{ patch: { kind: 'X' } }] }, `${D}.patches[0].patch`, 'must be a string'],
    ['empty patch', { patches: [{ patch: '  \n' }] }, `${D}.patches[0].patch`, 'is empty; expected'],
    [
      'patch not YAML',
      { patches: [{ patch: 'kind: [Deployment' }] },
      `${D}.patches[0].patch`,
      'is not valid YAML at line',
    ],
    [
      'patch a plain string',
      { patches: [{ patch: 'replicas=3', target: { kind: 'Deployment' } }] },
      `${D}.patches[0].patch`,
      'must be a strategic merge patch (a YAML object with kind and metadata.name) or a JSON6902 patch',
    ],
    [
      'JSON6902 without target',
      { patches: [{ patch: ops }] },
      `${D}.patches[0].target`,
      'is required for a JSON6902 patch (a list of operations)',
    ],
    [
      'unknown JSON6902 op',
      {
        patches: [
          { patch: '- op: set\n  path: /spec/replicas\n  value: 3\n', target: { kind: 'Deployment' } },
        ],
      },
      `${D}.patches[0].patch`,
      'operation 0: op must be one of add, remove, replace, move, copy, test, not "set"',
    ],
    [
      'JSON6902 path without slash',
      { patches: [{ patch: '[{"op": "remove", "path": "spec"}]', target: { kind: 'Deployment' } }] },
      `${D}.patches[0].patch`,
      'operation 0: remove: path must be a JSON pointer starting with "/"',
    ],
    [
      'JSON6902 add without value',
      { patches: [{ patch: '- op: add\n  path: /data/x\n', target: { kind: 'ConfigMap' } }] },
      `${D}.patches[0].patch`,
      'operation 0: add /data/x: value is missing',
    ],
    [
      'JSON6902 move without from',
      { patches: [{ patch: '- op: move\n  path: /data/x\n', target: { kind: 'ConfigMap' } }] },
      `${D}.patches[0].patch`,
      'operation 0: move /data/x: from must be a JSON pointer',
    ],
    [
      'JSON6902 with no operations',
      { patches: [{ patch: '[]', target: { kind: 'ConfigMap' } }] },
      `${D}.patches[0].patch`,
      'is a JSON6902 patch with no operations',
    ],
    [
      'merge patch without kind and name',
      { patches: [{ patch: 'spec:\n  replicas: 3\n', target: { kind: 'Deployment' } }] },
      `${D}.patches[0].patch`,
      'a strategic merge patch needs kind and metadata.name: kustomize needs them to read the patch',
    ],
    [
      'untargeted merge patch without apiVersion',
      { patches: [{ patch: 'kind: Deployment\nmetadata:\n  name: web\n' }] },
      `${D}.patches[0].patch`,
      'a strategic merge patch needs apiVersion: without a target they name the object to patch',
    ],
    [
      'several merge patches with a target',
      { patches: [{ patch: `${smp}---\n${smp}`, target: { kind: 'Deployment' } }] },
      `${D}.patches[0].patch`,
      'holds 2 strategic merge patches; with a target, a patch must be a single document',
    ],
    [
      'unknown target field',
      { patches: [{ patch: ops, target: { kinds: 'Deployment' } }] },
      `${D}.patches[0].target`,
      'unknown field "kinds" (did you mean "kind"?)',
    ],
    [
      'empty target field',
      { patches: [{ patch: ops, target: { kind: '' } }] },
      `${D}.patches[0].target.kind`,
      'must not be empty',
    ],
    ['patches not a list', { patches: { patch: smp } }, `${D}.patches`, 'must be a list, not an object'],
    ['image without name', { images: [{ newTag: '1.2' }] }, `${D}.images[0].name`, 'is required'],
    [
      'image with nothing to change',
      { images: [{ name: 'nginx' }] },
      `${D}.images[nginx]`,
      'set at least one of newName, newTag and digest',
    ],
    [
      'image name with a tag',
      { images: [{ name: 'nginx:1.27', newTag: '1.28' }] },
      `${D}.images[0].name`,
      '"nginx:1.27" is not an image name: leave out the tag and digest',
    ],
    [
      'new name with a digest',
      { images: [{ name: 'app', newName: `ghcr.io/org/app@${DIGEST_256}` }] },
      `${D}.images[app].newName`,
      'is not an image name',
    ],
    [
      'bad tag',
      { images: [{ name: 'nginx', newTag: '1.27 latest' }] },
      `${D}.images[nginx].newTag`,
      '"1.27 latest" is not a tag',
    ],
    [
      'bad digest',
      { images: [{ name: 'nginx', digest: 'sha256:abc' }] },
      `${D}.images[nginx].digest`,
      '"sha256:abc" is not a digest',
    ],
    [
      'image listed twice',
      {
        images: [
          { name: 'ghcr.io/org/app', newTag: '1' },
          { name: 'ghcr.io/org/app', newTag: '2' },
        ],
      },
      `${D}.images[1].name`,
      'image "ghcr.io/org/app" is listed more than once (also images[0])',
    ],
  ];

  it.each(cases)('%s', (_, overrides, path, message) => {
    const issues = issuesOf(() => parseConfig({ deliveries: [delivery(overrides)] }, 'sluice.yaml'));
    expect(issues).toContainEqual({ path, message: expect.stringContaining(message) });
  });

  it('reports every broken patch and image at once', () => {
    const issues = issuesOf(() =>
      parseConfig({
        deliveries: [delivery({ patches: [{ patch: ops }, { patch: '[' }], images: [{ name: 'nginx' }] })],
      }),
    );
    expect(issues.map((issue) => issue.path)).toEqual([
      `${D}.patches[0].target`,
      `${D}.patches[1].patch`,
      `${D}.images[nginx]`,
    ]);
  });
});
