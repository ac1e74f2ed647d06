// source.verify with provider notation: what the config parser accepts, and what it refuses by
// name (what sluice does not understand or would not enforce). Plain values: no component runs.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseDelivery } from '../../../functions/core/config/index.ts';
import { parseDistinguishedName } from '../../../functions/core/oci/notation-policy.ts';

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'fixtures', 'notation');
const ROOT = readFileSync(join(FIXTURES, 'schema-root.pem'), 'utf8');
const LEAF = readFileSync(join(FIXTURES, 'schema-leaf.pem'), 'utf8');
const IDENTITY = 'x509.subject: C=US, ST=WA, O=sluice test, CN=release';
const PROFILE = 'arn:aws:signer:us-west-2:123456789012:/signing-profiles/release';

const delivery = (verify: unknown) =>
  parseDelivery({
    name: 'app',
    source: { url: 'oci://registry.example.com/team/app', tag: 'v1', verify },
    cluster: { kubeconfig: '/kubeconfig' },
  });

const policy = (
  overrides: Record<string, unknown> = {},
  stores: Record<string, unknown> = { 'ca:release': [ROOT] },
) => ({
  provider: 'notation',
  trustPolicy: {
    signatureVerification: { level: 'strict' },
    trustStores: ['ca:release'],
    trustedIdentities: [IDENTITY],
    ...overrides,
  },
  trustStores: stores,
});

describe('source.verify provider notation', () => {
  it('takes a Notation trust policy statement and the trust stores it names', () => {
    expect(
      delivery(policy({ name: 'release', registryScopes: ['registry.example.com/team/app'] })).source.verify,
    ).toEqual({
      provider: 'notation',
      trustPolicy: {
        registryScopes: ['registry.example.com/team/app'],
        signatureVerification: { level: 'strict' },
        trustStores: ['ca:release'],
        trustedIdentities: [IDENTITY],
      },
      trustStores: { 'ca:release': [ROOT] },
    });
  });

  it('takes awsSigner: signing profile (version) ARNs and the root', () => {
    expect(
      delivery({
        provider: 'notation',
        awsSigner: { profileArns: [PROFILE, `${PROFILE}/a1B2c3D4e5`], rootCertificates: [ROOT] },
      }).source.verify,
    ).toEqual({
      provider: 'notation',
      awsSigner: { profileArns: [PROFILE, `${PROFILE}/a1B2c3D4e5`], rootCertificates: [ROOT] },
    });
  });

  it.each([
    [
      policy({ signatureVerification: { level: 'audit' } }),
      'trustPolicy.signatureVerification.level: level "audit" does not enforce who signed',
    ],
    [policy({ signatureVerification: { level: 'skip' } }), 'level "skip" does not enforce who signed'],
    [
      policy({ signatureVerification: { level: 'lenient' } }),
      'unknown level "lenient" (expected strict or permissive)',
    ],
    [
      policy({ signatureVerification: { level: 'strict', override: { revocation: 'skip' } } }),
      'override is not supported',
    ],
    [
      policy({ signatureVerification: { level: 'strict', verifyTimestamp: 'always' } }),
      'sluice verifies no timestamp countersignatures',
    ],
    [policy({ trustedIdentities: ['*'] }), '"*" trusts anyone the trust stores certify'],
    [
      policy({ trustedIdentities: ['x509.subject: CN=release'] }),
      'has no C, ST, O: a trusted identity names at least C, ST (or S) and O',
    ],
    [policy({ trustedIdentities: ['C=US, ST=WA, O=x'] }), 'has no "x509.subject:" prefix'],
    [
      policy({ trustedIdentities: [`x509.subject: C=US, ST=WA, O=x+OU=y`] }),
      'multi-valued RDNs (with "+") are not supported',
    ],
    [policy({ trustedIdentities: ['x509.subject: C=US, ST=WA, O=x, O=y'] }), 'the attribute O appears twice'],
    [
      policy({ trustedIdentities: ['x509.subject: C=US, ST=WA, O=#0403'] }),
      'hex-encoded values (=#) are not supported',
    ],
    [
      policy({ trustedIdentities: [PROFILE] }),
      'is a arn identity; sluice verifies x509.subject identities (for AWS Signer profiles, use awsSigner.profileArns)',
    ],
    [policy({ trustedIdentities: [IDENTITY, 'x509.subject: C=US, ST=WA, O=sluice test'] }), 'overlaps'],
    [
      policy({ trustStores: ['tsa:stamps'] }, { 'tsa:stamps': [ROOT] }),
      'is a timestamping (tsa) store: sluice does not verify timestamp countersignatures',
    ],
    [
      policy({ trustStores: ['x509:release'] }, { 'x509:release': [ROOT] }),
      'has the unknown trust store type "x509"',
    ],
    [
      policy({ trustStores: ['ca:other'] }),
      'the trust policy names trust store "ca:other", which trustStores does not hold',
    ],
    [
      policy({}, { 'ca:release': [ROOT], 'ca:spare': [ROOT] }),
      'trust store "ca:spare" is not named by trustPolicy.trustStores',
    ],
    [policy({}, { 'ca:release': [LEAF] }), 'is not a CA certificate'],
    [policy({}, { 'ca:release': ['not a certificate'] }), 'is not a PEM certificate'],
    [
      policy({ registryScopes: ['registry.example.com/team/other'] }),
      "does not include this source's repository registry.example.com/team/app",
    ],
    [
      policy({ registryScopes: ['*', 'registry.example.com/team/app'] }),
      '"*" cannot be listed with other scopes',
    ],
    [
      { ...policy(), awsSigner: { profileArns: [PROFILE], rootCertificates: [ROOT] } },
      'set trustPolicy or awsSigner, not both',
    ],
    [{ provider: 'notation' }, 'name the signer: trustPolicy (with trustStores) or awsSigner'],
    [
      {
        provider: 'notation',
        awsSigner: {
          profileArns: ['arn:aws:signer:us-west-2:123456789012:signing-profiles/x'],
          rootCertificates: [ROOT],
        },
      },
      'is not a signing profile ARN',
    ],
    [
      {
        provider: 'notation',
        awsSigner: {
          profileArns: ['arn:aws-cn:signer:us-west-2:123456789012:/signing-profiles/x1'],
          rootCertificates: [ROOT],
        },
      },
      'is not a signing profile ARN',
    ],
    [
      { provider: 'notation', awsSigner: { profileArns: [PROFILE], rootCertificates: [] } },
      "give AWS Signer's Notation root certificate",
    ],
    [{ provider: 'notary' }, 'source.verify.provider: provider is "cosign" or "notation"'],
  ])('refuses %j, saying why', (verify, message) => {
    expect(() => delivery(verify)).toThrow(message);
  });
});

describe('trusted identities are read as Notation reads them', () => {
  it('parses RFC 4514 escapes and reads S as ST', () => {
    expect(parseDistinguishedName('C=US, S=WA, O=Example\\, Inc., CN=a\\2Bb')).toEqual(
      new Map([
        ['C', 'US'],
        ['ST', 'WA'],
        ['O', 'Example, Inc.'],
        ['CN', 'a+b'],
      ]),
    );
  });
});
