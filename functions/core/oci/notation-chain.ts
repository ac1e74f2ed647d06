// The certificate chain of a Notation signature, checked as notation-core-go's
// x509.ValidateCodeSigningCertChain checks it: leaf first, each issued and signed by the next, the
// last self-signed; the leaf a code-signing certificate, the others CAs.
import { X509Certificate } from 'node:crypto';
import { AsnConvert } from '@peculiar/asn1-schema';
import {
  BasicConstraints,
  Certificate,
  ExtendedKeyUsage,
  KeyUsage,
  KeyUsageFlags,
  id_ce_basicConstraints,
  id_ce_cRLDistributionPoints,
  id_ce_extKeyUsage,
  id_ce_keyUsage,
} from '@peculiar/asn1-x509';
import type { DistinguishedName } from './notation-policy.ts';

/** One certificate of a chain: Node's view (signatures, times, keys) and the extensions Notation reads. */
export interface ChainCertificate {
  readonly x509: X509Certificate;
  /** The subject as Go names its attributes (C, ST, L, O, OU, CN, SERIALNUMBER, STREET, POSTALCODE), for trusted identities. */
  readonly subject: DistinguishedName;
  /** Readable subject, `C=US, ST=WA, …`. */
  readonly name: string;
  readonly keyUsage?: { readonly flags: number; readonly critical: boolean };
  readonly basicConstraints?: { readonly ca: boolean; readonly pathLength?: number };
  readonly extendedKeyUsages: readonly string[];
  /** Whether it names where its revocation is published (CRL distribution points or an OCSP responder). */
  readonly revocationEndpoints: boolean;
  /** Subject problems Notation refuses in a leaf (multi-valued RDNs, repeated attributes), if any. */
  readonly subjectProblem?: string;
}

/** Go's crypto/x509/pkix names for attribute types; others are printed as their OID. */
const GO_NAMES: Record<string, string> = {
  '2.5.4.6': 'C',
  '2.5.4.8': 'ST',
  '2.5.4.7': 'L',
  '2.5.4.10': 'O',
  '2.5.4.11': 'OU',
  '2.5.4.3': 'CN',
  '2.5.4.5': 'SERIALNUMBER',
  '2.5.4.9': 'STREET',
  '2.5.4.17': 'POSTALCODE',
};

const EKU = {
  serverAuth: '1.3.6.1.5.5.7.3.1',
  clientAuth: '1.3.6.1.5.5.7.3.2',
  emailProtection: '1.3.6.1.5.5.7.3.4',
  timeStamping: '1.3.6.1.5.5.7.3.8',
  ocspSigning: '1.3.6.1.5.5.7.3.9',
};

/** Reads a DER certificate; throws an Error naming what cannot be read. */
export function readCertificate(der: Buffer): ChainCertificate {
  const x509 = new X509Certificate(der);
  const asn = AsnConvert.parse(der, Certificate);
  const subject = new Map<string, string>();
  let subjectProblem: string | undefined;
  for (const rdn of asn.tbsCertificate.subject) {
    if (rdn.length > 1) subjectProblem ??= 'its subject has a multi-valued RDN';
    for (const attribute of rdn) {
      const type = GO_NAMES[attribute.type] ?? attribute.type;
      if (subject.has(type)) subjectProblem ??= `its subject has ${type} twice`;
      subject.set(type, attribute.value.toString());
    }
  }
  let keyUsage: ChainCertificate['keyUsage'];
  let basicConstraints: ChainCertificate['basicConstraints'];
  let extendedKeyUsages: string[] = [];
  let revocationEndpoints = /^OCSP - /m.test(x509.infoAccess ?? '');
  for (const extension of asn.tbsCertificate.extensions ?? []) {
    if (extension.extnID === id_ce_keyUsage)
      keyUsage = {
        flags: AsnConvert.parse(extension.extnValue, KeyUsage).toNumber(),
        critical: extension.critical,
      };
    else if (extension.extnID === id_ce_basicConstraints) {
      const constraints = AsnConvert.parse(extension.extnValue, BasicConstraints);
      basicConstraints = {
        ca: constraints.cA,
        ...(constraints.pathLenConstraint !== undefined && { pathLength: constraints.pathLenConstraint }),
      };
    } else if (extension.extnID === id_ce_extKeyUsage)
      extendedKeyUsages = [...AsnConvert.parse(extension.extnValue, ExtendedKeyUsage)];
    else if (extension.extnID === id_ce_cRLDistributionPoints) revocationEndpoints = true;
  }
  return {
    x509,
    subject,
    name: x509.subject.split('\n').join(', '),
    ...(keyUsage && { keyUsage }),
    ...(basicConstraints && { basicConstraints }),
    extendedKeyUsages,
    revocationEndpoints,
    ...(subjectProblem && { subjectProblem }),
  };
}

/**
 * The JWS algorithm a certificate's key signs with in Notation (notation-core-go's key specs):
 * RSA 2048/3072/4096 → PS256/384/512, EC P-256/384/521 → ES256/384/512; undefined for any other key.
 */
export function jwsAlgorithmOf(cert: X509Certificate): string | undefined {
  const key = cert.publicKey;
  const details = key.asymmetricKeyDetails ?? {};
  if (key.asymmetricKeyType === 'rsa')
    return ({ 2048: 'PS256', 3072: 'PS384', 4096: 'PS512' } as Record<number, string>)[
      details.modulusLength ?? 0
    ];
  if (key.asymmetricKeyType === 'ec')
    return ({ prime256v1: 'ES256', secp384r1: 'ES384', secp521r1: 'ES512' } as Record<string, string>)[
      details.namedCurve ?? ''
    ];
  return undefined;
}

/** Whether `subject` names `issuer` as its issuer and carries its signature. */
function issuedBy(subject: ChainCertificate, issuer: ChainCertificate): boolean {
  try {
    return subject.x509.checkIssued(issuer.x509) && subject.x509.verify(issuer.x509.publicKey);
  } catch {
    return false;
  }
}

const LEAF_FORBIDDEN: [number, string][] = [
  [KeyUsageFlags.keyEncipherment, 'KeyEncipherment'],
  [KeyUsageFlags.dataEncipherment, 'DataEncipherment'],
  [KeyUsageFlags.keyAgreement, 'KeyAgreement'],
  [KeyUsageFlags.keyCertSign, 'CertSign'],
  [KeyUsageFlags.cRLSign, 'CRLSign'],
  [KeyUsageFlags.encipherOnly, 'EncipherOnly'],
  [KeyUsageFlags.decipherOnly, 'DecipherOnly'],
];

function keyUsageProblem(cert: ChainCertificate): string | undefined {
  if (!cert.keyUsage) return `certificate ${cert.name}: has no key usage extension`;
  if (!cert.keyUsage.critical) return `certificate ${cert.name}: its key usage extension is not critical`;
  return undefined;
}

function leafProblem(cert: ChainCertificate): string | undefined {
  if (cert.basicConstraints?.ca) return `leaf certificate ${cert.name}: is a CA certificate`;
  const usage = keyUsageProblem(cert);
  if (usage) return usage;
  const flags = cert.keyUsage!.flags;
  if ((flags & KeyUsageFlags.digitalSignature) === 0)
    return `leaf certificate ${cert.name}: its key usage lacks Digital Signature`;
  const extra = LEAF_FORBIDDEN.filter(([flag]) => (flags & flag) !== 0).map(([, name]) => name);
  if (extra.length > 0)
    return `leaf certificate ${cert.name}: its key usage must be Digital Signature only, but has ${extra.join(', ')}`;
  const excluded = Object.entries(EKU).filter(([, oid]) => cert.extendedKeyUsages.includes(oid));
  if (excluded.length > 0)
    return `leaf certificate ${cert.name}: its extended key usage has ${excluded.map(([name]) => name).join(', ')}, which a code-signing certificate must not have`;
  if (!jwsAlgorithmOf(cert.x509))
    return `leaf certificate ${cert.name}: its key is not RSA 2048/3072/4096 or EC P-256/384/521`;
  return undefined;
}

function caProblem(cert: ChainCertificate, expectedPathLength: number): string | undefined {
  if (!cert.basicConstraints?.ca) return `certificate ${cert.name}: is not a CA (basic constraints)`;
  const pathLength = cert.basicConstraints.pathLength;
  if (pathLength !== undefined && pathLength < expectedPathLength)
    return `certificate ${cert.name}: its path length ${pathLength} is less than the ${expectedPathLength} the chain needs`;
  const usage = keyUsageProblem(cert);
  if (usage) return usage;
  if ((cert.keyUsage!.flags & KeyUsageFlags.keyCertSign) === 0)
    return `certificate ${cert.name}: its key usage lacks Certificate Sign`;
  return undefined;
}

/**
 * Why `chain` (leaf first) is not a code-signing chain as Notation accepts one, or undefined. A
 * one-certificate chain is a self-signed leaf; a longer one ends in a self-signed root, and no
 * certificate before it is self-signed.
 */
export function chainProblem(chain: readonly ChainCertificate[]): string | undefined {
  if (chain.length === 0) return 'it has no certificate chain';
  if (chain.length === 1) {
    const [cert] = chain as [ChainCertificate];
    if (!issuedBy(cert, cert)) return `its only certificate ${cert.name} is not self-signed`;
    return leafProblem(cert);
  }
  for (const [index, cert] of chain.entries()) {
    const last = index === chain.length - 1;
    if (last) {
      if (!issuedBy(cert, cert)) return `its last certificate ${cert.name} is not a self-signed root`;
    } else {
      if (issuedBy(cert, cert))
        return `certificate ${cert.name} is self-signed but is not the last of the chain`;
      if (!issuedBy(cert, chain[index + 1]!))
        return `certificate ${cert.name} is not issued and signed by the next, ${chain[index + 1]!.name}`;
    }
    const problem = index === 0 ? leafProblem(cert) : caProblem(cert, index - 1);
    if (problem) return problem;
  }
  return undefined;
}

/** The first certificate of `chain` not valid at `at`, described; undefined when all are. */
export function validityProblem(
  chain: readonly ChainCertificate[],
  at: Date,
  when: string,
): string | undefined {
  for (const cert of chain) {
    const from = new Date(cert.x509.validFrom);
    const to = new Date(cert.x509.validTo);
    if (at < from)
      return `certificate ${cert.name} is not valid until ${from.toISOString()} (${when} is ${at.toISOString()})`;
    if (at > to)
      return `certificate ${cert.name} expired at ${to.toISOString()} (${when} is ${at.toISOString()})`;
  }
  return undefined;
}
