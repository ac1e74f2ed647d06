// The construct for `verify: { provider: cosign, kmsKeyArn }`: the reconcile function's role gets
// kms:GetPublicKey on exactly the named keys and nothing else of KMS; synth refuses a key ARN that
// is not one (an alias, a bare id) or is of another partition than the stack's; a key of another
// Region is granted as it is (the function asks KMS in the key's Region). Templates only.
import { describe, expect, it } from 'vitest';
import type { SluiceDelivery } from '../../lib/index.ts';
import {
  ACCOUNT,
  ECR_URL,
  logicalId,
  REGION,
  statementsOf,
  synth,
  withoutCloudFormationChecks,
} from './synth.ts';

withoutCloudFormationChecks();

const NAMED = { eks: { name: 'staging', region: 'eu-west-1' } };
const key = (id: string, region = REGION, partition = 'aws') =>
  `arn:${partition}:kms:${region}:${ACCOUNT}:key/${id}-12ab-34cd-56ef-1234567890ab`;
const signed = (name: string, kmsKeyArn: string): SluiceDelivery => ({
  name,
  source: { url: ECR_URL, verify: { provider: 'cosign', kmsKeyArn } },
  cluster: NAMED,
});

const deployerStatements = (template: ReturnType<typeof synth>['template']) =>
  statementsOf(
    template,
    logicalId(template, 'AWS::IAM::Role', (p) => String(p.Description).startsWith('sluice: reconciles')),
  );
const kmsStatements = (template: ReturnType<typeof synth>['template']) =>
  deployerStatements(template).filter((s) => JSON.stringify(s.Action).includes('kms:'));

describe('verify with a KMS key: the grant', () => {
  it('kms:GetPublicKey on exactly the named keys (one of another Region and account among them), nothing else of KMS', () => {
    const elsewhere = 'arn:aws:kms:us-west-2:210987654321:key/abcdef01-12ab-34cd-56ef-1234567890ab';
    const { template } = synth(() => ({
      deliveries: [
        signed('a', key('1234abcd')),
        signed('b', key('1234abcd')),
        signed('c', elsewhere),
        { name: 'd', source: { url: ECR_URL }, cluster: NAMED },
      ],
    }));
    expect(kmsStatements(template)).toEqual([
      { Action: 'kms:GetPublicKey', Effect: 'Allow', Resource: [key('1234abcd'), elsewhere] },
    ]);
  });

  it('a rollout’s source is verified by the reconcile function too: its key is granted', () => {
    const { template } = synth(() => ({
      deliveries: [{ name: 'member', source: { url: ECR_URL }, cluster: NAMED }],
      rollouts: [
        {
          name: 'fleet',
          source: { url: ECR_URL, verify: { provider: 'cosign', kmsKeyArn: key('5678abcd') } },
          waves: [{ deliveries: ['member'] }],
        },
      ],
    }));
    expect(kmsStatements(template)).toEqual([
      { Action: 'kms:GetPublicKey', Effect: 'Allow', Resource: key('5678abcd') },
    ]);
  });

  it('no KMS action without a KMS key to verify against', () => {
    const { template } = synth(() => ({
      deliveries: [{ name: 'a', source: { url: ECR_URL }, cluster: NAMED }],
    }));
    expect(kmsStatements(template)).toEqual([]);
  });
});

describe('verify with a KMS key: synth refuses', () => {
  it.for([
    ['an alias ARN', `arn:aws:kms:${REGION}:${ACCOUNT}:alias/signing`, /is an alias; name the key's ARN/],
    ['a bare key id', '1234abcd-12ab-34cd-56ef-1234567890ab', /is not an ARN; name the key by its ARN/],
    ['a malformed ARN', `arn:aws:kms:${REGION}:${ACCOUNT}:key/`, /is not a KMS key ARN/],
  ] as const)('%s, naming the field', ([, arn, problem]) => {
    expect(() => synth(() => ({ deliveries: [signed('app', arn)] }))).toThrow(
      new RegExp(`deliveries\\[app\\]\\.source\\.verify\\.kmsKeyArn: .*${problem.source}`),
    );
  });

  it('a key of another partition than the stack’s, naming the field, the key and both partitions', () => {
    const china = key('1234abcd', 'cn-north-1', 'aws-cn');
    expect(() => synth(() => ({ deliveries: [signed('app', china)] }))).toThrow(
      `deliveries[app].source.verify.kmsKeyArn: KMS key ${china} is in partition aws-cn, but this stack deploys to ${REGION} (partition aws)`,
    );
    expect(() =>
      synth(() => ({ deliveries: [signed('app', key('1234abcd'))] }), {
        stackProps: { env: { account: ACCOUNT, region: 'cn-northwest-1' } },
      }),
    ).toThrow('is in partition aws, but this stack deploys to cn-northwest-1 (partition aws-cn)');
  });

  it('a key of the stack’s own partition elsewhere is not refused; nor is any in an environment-agnostic stack (its partition is known at deploy)', () => {
    const china = key('1234abcd', 'cn-north-1', 'aws-cn');
    const { template } = synth(() => ({ deliveries: [signed('app', china)] }), {
      stackProps: { env: { account: ACCOUNT, region: 'cn-northwest-1' } },
    });
    expect(kmsStatements(template)).toEqual([
      { Action: 'kms:GetPublicKey', Effect: 'Allow', Resource: china },
    ]);
    expect(() => synth(() => ({ deliveries: [signed('app', china)] }), { stackProps: {} })).not.toThrow();
  });
});

describe('verify: what synth says of where the signer is', () => {
  it('a KMS key of another account or Region is granted and warned of (its key policy decides); one of the stack’s own is not warned of', () => {
    const otherAccount = 'arn:aws:kms:eu-west-1:210987654321:key/abcdef01-12ab-34cd-56ef-1234567890ab';
    const otherRegion = key('2345abcd', 'us-west-2');
    const warned = synth(() => ({
      deliveries: [signed('a', otherAccount), signed('b', otherRegion), signed('c', key('1234abcd'))],
    }));
    const warnings = JSON.stringify(warned.app.synth().getStackArtifact(warned.stack.artifactId).messages);
    expect(warnings).toContain(
      `the KMS keys ${otherAccount}, ${otherRegion} that source.verify.kmsKeyArn names`,
    );
    expect(warnings).not.toContain(key('1234abcd'));
    const quiet = synth(() => ({ deliveries: [signed('c', key('1234abcd'))] }));
    expect(JSON.stringify(quiet.app.synth().getStackArtifact(quiet.stack.artifactId).messages)).not.toContain(
      'sluice:signature-key-elsewhere',
    );
  });

  it('keyless needs no AWS permission: no KMS action, nothing more than without verify', () => {
    const keyless = synth(() => ({
      deliveries: [
        {
          name: 'a',
          source: {
            url: ECR_URL,
            verify: {
              provider: 'cosign',
              keyless: {
                issuer: 'https://token.actions.githubusercontent.com',
                subjectRegExp: 'https://github\\.com/org/.+',
              },
            },
          },
          cluster: NAMED,
        },
      ],
    }));
    const plain = synth(() => ({ deliveries: [{ name: 'a', source: { url: ECR_URL }, cluster: NAMED }] }));
    expect(kmsStatements(keyless.template)).toEqual([]);
    expect(deployerStatements(keyless.template)).toEqual(deployerStatements(plain.template));
  });
});
