// Notation's trust policy and trust store as `source.verify` holds them, and the checks the config
// parser makes of them (the Notary Project's trust policy specification; notation-go's
// verifier/trustpolicy and internal/pkix are how the checks behave).
import { X509Certificate } from 'node:crypto';
import { partitionOfRegion } from './ecr-host.ts';

/** Notation's verification levels sluice enforces (audit and skip do not authorize the signer). */
export type NotationLevel = 'strict' | 'permissive';

/** One Notation trust policy statement, for the delivery's own repository. */
export interface NotationTrustPolicy {
  /** `host/repository` scopes or `*`; when set, it must cover the source's repository. */
  readonly registryScopes?: readonly string[];
  readonly signatureVerification: { readonly level: NotationLevel };
  /** `ca:<name>` or `signingAuthority:<name>`, each a key of `trustStores`. */
  readonly trustStores: readonly string[];
  /** `x509.subject: <DN>` (RFC 4514, with at least C, ST and O). */
  readonly trustedIdentities: readonly string[];
}

/**
 * `source.verify` with `provider: notation`: a trust policy and the trust stores it names (each a
 * named set of PEM CA certificates, keyed `<type>:<name>` as the policy names it), or
 * `awsSigner`: AWS Signer signatures by these signing profiles, checked for revocation.
 */
export type NotationVerification =
  | {
      readonly provider: 'notation';
      readonly trustPolicy: NotationTrustPolicy;
      readonly trustStores: Readonly<Record<string, readonly string[]>>;
    }
  | {
      readonly provider: 'notation';
      readonly awsSigner: {
        /** Signing profile ARNs (`arn:aws:signer:<region>:<account>:/signing-profiles/<name>`), or profile version ARNs. */
        readonly profileArns: readonly string[];
        /** AWS Signer's Notation root certificate(s), PEM, as AWS publishes them. */
        readonly rootCertificates: readonly string[];
      };
    };

/** Trust store types sluice reads; `tsa` (timestamping) is refused: sluice verifies no timestamps. */
export const TRUST_STORE_TYPES = ['ca', 'signingAuthority'] as const;
const STORE_NAME = /^[a-zA-Z0-9_.-]+$/;

/** What is wrong with a `<type>:<name>` trust store reference, or undefined. */
export function trustStoreProblem(reference: string): string | undefined {
  const [type, name] = reference.split(/:(.*)/s);
  if (name === undefined) return `"${reference}" is not <type>:<name> (e.g. "ca:release-signers")`;
  if (type === 'tsa')
    return `"${reference}" is a timestamping (tsa) store: sluice does not verify timestamp countersignatures, so it refuses a policy that relies on them`;
  if (!(TRUST_STORE_TYPES as readonly string[]).includes(type!))
    return `"${reference}" has the unknown trust store type "${type}" (expected ca or signingAuthority)`;
  if (!STORE_NAME.test(name))
    return `"${reference}" has the invalid store name "${name}" (letters, digits, ".", "_" and "-")`;
  return undefined;
}

/** What is wrong with a PEM bundle of CA certificates, or undefined. */
export function caCertificatesProblem(pem: string): string | undefined {
  const blocks = pemBlocks(pem);
  if (blocks.length === 0) return 'is not a PEM certificate (no -----BEGIN CERTIFICATE----- block)';
  for (const [index, block] of blocks.entries()) {
    let cert: X509Certificate;
    try {
      cert = new X509Certificate(block);
    } catch (error) {
      return `certificate ${index + 1} cannot be read (${(error as Error).message})`;
    }
    if (!cert.ca) return `certificate ${index + 1} (${oneLine(cert.subject)}) is not a CA certificate`;
  }
  return undefined;
}

/** The PEM certificate blocks of `text`. */
export function pemBlocks(text: string): string[] {
  return text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
}

/** A certificate name as one line, `C=US, ST=WA, …`. */
export function oneLine(name: string): string {
  return name.split('\n').join(', ');
}

/** A distinguished name as Notation compares it: attribute type → value, one value per type. */
export type DistinguishedName = ReadonlyMap<string, string>;

/**
 * Parses an RFC 4514 distinguished name the way notation-go does (go-ldap's ParseDN, then
 * internal/pkix): `S` is read as `ST`; multi-valued RDNs, repeated types and hex (`=#`) values
 * are refused; C, ST and O must be present. Throws an Error saying what is wrong.
 */
export function parseDistinguishedName(dn: string): DistinguishedName {
  if (dn.includes('=#'))
    throw new Error(`"${dn}": hex-encoded values (=#) are not supported, as Notation does not support them`);
  const attributes = new Map<string, string>();
  for (const rdn of splitUnescaped(dn, ',')) {
    if (splitUnescaped(rdn, '+').length > 1)
      throw new Error(`"${dn}": multi-valued RDNs (with "+") are not supported`);
    const [rawType, rawValue] = splitUnescaped(rdn, '=', 2);
    if (rawType === undefined || rawValue === undefined || rawType.trim() === '')
      throw new Error(`"${dn}": "${rdn.trim()}" is not <type>=<value>`);
    let type = rawType.trim();
    if (!/^([A-Za-z][A-Za-z0-9-]*|\d+(\.\d+)+)$/.test(type))
      throw new Error(`"${dn}": "${type}" is not an attribute type`);
    if (type === 'S') type = 'ST';
    const value = unescapeValue(rawValue, dn);
    if (attributes.has(type)) throw new Error(`"${dn}": the attribute ${type} appears twice`);
    attributes.set(type, value);
  }
  const missing = ['C', 'ST', 'O'].filter((type) => !attributes.get(type));
  if (missing.length > 0)
    throw new Error(
      `"${dn}" has no ${missing.join(', ')}: a trusted identity names at least C, ST (or S) and O`,
    );
  return attributes;
}

/** `text` split at `separator` where it is not escaped with a backslash, into at most `limit` parts. */
function splitUnescaped(text: string, separator: string, limit = Infinity): string[] {
  const parts: string[] = [];
  let current = '';
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!;
    if (char === '\\' && i + 1 < text.length) {
      current += char + text[i + 1]!;
      i++;
    } else if (char === separator && parts.length < limit - 1) {
      parts.push(current);
      current = '';
    } else current += char;
  }
  parts.push(current);
  return parts;
}

/** An RFC 4514 value without its escapes (`\,`, `\"`, `\XX` hex pairs); unescaped spaces at either end trimmed. */
function unescapeValue(raw: string, dn: string): string {
  const trimmed = raw.replace(/^\s+/, '').replace(/(?<!\\)\s+$/, '');
  const bytes: number[] = [];
  for (let i = 0; i < trimmed.length; i++) {
    const char = trimmed[i]!;
    if (char !== '\\') {
      bytes.push(...Buffer.from(char, 'utf8'));
      continue;
    }
    const pair = trimmed.slice(i + 1, i + 3);
    if (/^[0-9a-fA-F]{2}$/.test(pair)) {
      bytes.push(parseInt(pair, 16));
      i += 2;
    } else if (i + 1 < trimmed.length && ' "#+,;<=>\\'.includes(trimmed[i + 1]!)) {
      bytes.push(trimmed.charCodeAt(i + 1));
      i += 1;
    } else throw new Error(`"${dn}": a backslash escapes nothing valid in "${raw.trim()}"`);
  }
  return Buffer.from(bytes).toString('utf8');
}

/**
 * What is wrong with a trust policy's trusted identities, or undefined: each is
 * `x509.subject: <DN>` with a valid DN, and no one is a subset of another (as Notation refuses).
 * The wildcard `*` and other identity kinds are refused: sluice authorizes named signers.
 */
export function trustedIdentitiesProblem(identities: readonly string[]): string | undefined {
  const parsed: [string, DistinguishedName][] = [];
  for (const identity of identities) {
    if (identity === '*')
      return '"*" trusts anyone the trust stores certify; name the signers as "x509.subject: C=…, ST=…, O=…, CN=…"';
    const [prefix, value] = identity.split(/:(.*)/s);
    if (value === undefined)
      return `"${identity}" has no "x509.subject:" prefix (e.g. "x509.subject: C=US, ST=WA, O=Example, CN=release")`;
    if (prefix !== 'x509.subject')
      return `"${identity}" is a ${prefix} identity; sluice verifies x509.subject identities (for AWS Signer profiles, use awsSigner.profileArns)`;
    if (value.trim() === '') return `"${identity}" names no subject`;
    try {
      parsed.push([identity, parseDistinguishedName(value)]);
    } catch (error) {
      return (error as Error).message;
    }
  }
  for (const [a, dnA] of parsed)
    for (const [b, dnB] of parsed)
      if (a !== b && isSubsetDN(dnA, dnB))
        return `"${a}" overlaps "${b}" (every certificate the second matches, the first matches too); Notation refuses overlapping identities`;
  return undefined;
}

/** Whether every attribute of `identity` has the same value in `subject` (notation-go's IsSubsetDN). */
export function isSubsetDN(identity: DistinguishedName, subject: DistinguishedName): boolean {
  for (const [type, value] of identity) if (subject.get(type) !== value) return false;
  return true;
}

/** Whether `scopes` (Notation's registryScopes) covers `scope` (`host/repository`). */
export function scopeCovers(scopes: readonly string[], scope: string): boolean {
  return scopes.includes('*') || scopes.includes(scope);
}

/** What is wrong with registryScopes, or undefined: `*` alone, or `host/repository` values. */
export function registryScopesProblem(scopes: readonly string[]): string | undefined {
  if (scopes.includes('*') && scopes.length > 1)
    return '"*" cannot be listed with other scopes (as Notation refuses)';
  const bad = scopes.find((scope) => scope !== '*' && !/^[^/\s]+\/[^\s:@]+$/.test(scope));
  return bad === undefined
    ? undefined
    : `"${bad}" is not a repository (host/repository, without tag or digest) or "*"`;
}

/** An AWS Signer signing profile ARN, with or without its version. */
const PROFILE_ARN =
  /^arn:(aws|aws-cn|aws-us-gov):signer:([a-z]{2}(?:-[a-z]+)+-\d+):(\d{12}):\/signing-profiles\/([a-zA-Z0-9_]{2,64})(?:\/([a-zA-Z0-9]{10}))?$/;

export interface SigningProfileArn {
  readonly partition: string;
  readonly region: string;
  readonly account: string;
  readonly name: string;
  /** Set for a profile version ARN. */
  readonly version?: string;
}

/** The parts of a signing profile (version) ARN, or undefined. */
export function parseSigningProfileArn(arn: string): SigningProfileArn | undefined {
  const match = PROFILE_ARN.exec(arn);
  if (!match) return undefined;
  const [, partition, region, account, name, version] = match as unknown as string[];
  if (partitionOfRegion(region!) !== partition) return undefined;
  return {
    partition: partition!,
    region: region!,
    account: account!,
    name: name!,
    ...(version !== undefined && { version }),
  };
}

/** What is wrong with `arn` as a trusted AWS Signer signing profile, or undefined. */
export function signingProfileArnProblem(arn: string): string | undefined {
  return parseSigningProfileArn(arn)
    ? undefined
    : `"${arn}" is not a signing profile ARN (arn:aws:signer:<region>:<account>:/signing-profiles/<name>, or a profile version ARN ending /<version>)`;
}

/**
 * Whether the signature's `profileVersionArn` is of `trusted` (as AWS Signer's Notation plugin
 * matches, case-insensitively): a profile ARN trusts every version of the profile, a profile
 * version ARN only that version.
 */
export function profileMatches(trusted: string, profileVersionArn: string): boolean {
  const parsed = parseSigningProfileArn(trusted);
  if (!parsed) return false;
  const signed = profileVersionArn.toLowerCase();
  if (parsed.version !== undefined) return signed === trusted.toLowerCase();
  const slash = signed.lastIndexOf('/');
  return slash >= 0 && signed.slice(0, slash) === trusted.toLowerCase();
}
