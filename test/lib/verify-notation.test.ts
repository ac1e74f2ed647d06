// The construct for `verify: { provider: notation }`: the reconcile function's role gets
// signer:GetRevocationStatus only when a delivery's or rollout's verify uses awsSigner, and a
// trust-policy verify needs no AWS permission. Templates only.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { SluiceDelivery } from '../../lib/index.ts';
import { ECR_URL, logicalId, statementsOf, synth, withoutCloudFormationChecks } from './synth.ts';

withoutCloudFormationChecks();

const ROOT = readFileSync(
  join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'notation', 'schema-root.pem'),
  'utf8',
);
const NAMED = { eks: { name: 'staging', region: 'eu-west-1' } };
const PROFILE = 'arn:aws:signer:eu-west-1:123456789012:/signing-profiles/release';
const awsSigner = (name: string): SluiceDelivery => ({
  name,
  source: {
    url: ECR_URL,
    verify: { provider: 'notation', awsSigner: { profileArns: [PROFILE], rootCertificates: [ROOT] } },
  },
  cluster: NAMED,
});
const caPolicy = (name: string): SluiceDelivery => ({
  name,
  source: {
    url: ECR_URL,
    verify: {
      provider: 'notation',
      trustPolicy: {
        signatureVerification: { level: 'strict' },
        trustStores: ['ca:release'],
        trustedIdentities: ['x509.subject: C=US, ST=WA, O=Example, CN=release'],
      },
      trustStores: { 'ca:release': [ROOT] },
    },
  },
  cluster: NAMED,
});

const signerStatements = (template: ReturnType<typeof synth>['template']) =>
  statementsOf(
    template,
    logicalId(template, 'AWS::IAM::Role', (p) => String(p.Description).startsWith('sluice: reconciles')),
  ).filter((s) => JSON.stringify(s.Action).includes('signer:'));

describe('verify with Notation: the grant', () => {
  it('signer:GetRevocationStatus once when deliveries verify AWS Signer signatures', () => {
    const { template } = synth(() => ({ deliveries: [awsSigner('a'), awsSigner('b'), caPolicy('c')] }));
    expect(signerStatements(template)).toEqual([
      { Action: 'signer:GetRevocationStatus', Effect: 'Allow', Resource: '*' },
    ]);
  });

  it('no AWS Signer action for a trust policy of CA certificates, or without verify', () => {
    const { template } = synth(() => ({
      deliveries: [caPolicy('a'), { name: 'b', source: { url: ECR_URL }, cluster: NAMED }],
    }));
    expect(signerStatements(template)).toEqual([]);
  });
});
