import { isRecord } from '../config/issues.ts';
import { compileGoRegexp, GoRegexpError, type GoRegexp } from '../go-regexp.ts';

/** Which values of a file sops encrypted: the one rule its metadata names (default `_unencrypted` suffix). */
export type EncryptionRule =
  | { readonly kind: 'unencrypted_suffix' | 'encrypted_suffix'; readonly value: string }
  | { readonly kind: 'unencrypted_regex' | 'encrypted_regex'; readonly regex: GoRegexp };

/** Whether two rules are the same rule (kind and suffix or pattern). */
export const sameRule = (a: EncryptionRule, b: EncryptionRule): boolean =>
  a.kind === b.kind &&
  ('value' in a ? a.value : a.regex.source) === ('value' in b ? b.value : b.regex.source);

export interface KmsKeyEntry {
  readonly arn: string;
  /** The encryption context sops passed to KMS; KMS refuses to decrypt without the same one. */
  readonly context: Readonly<Record<string, string>>;
  /** base64 of the KMS ciphertext blob of the data key. */
  readonly enc: string;
}

export interface AgeKeyEntry {
  readonly recipient: string;
  /** The data key as an armored age file. */
  readonly enc: string;
}

/** A file's `sops` block, as far as sluice uses it. */
export interface SopsMetadata {
  readonly kms: readonly KmsKeyEntry[];
  readonly age: readonly AgeKeyEntry[];
  readonly rule: EncryptionRule;
  readonly macOnlyEncrypted: boolean;
  /** The encrypted MAC; also identifies the file (its IV is random). */
  readonly mac: string;
  readonly lastModified: string;
}

/** What sluice cannot decrypt with, by the sops metadata key. */
const UNSUPPORTED_KEY_TYPES: Readonly<Record<string, string>> = {
  pgp: 'PGP',
  gcp_kms: 'GCP KMS',
  azure_kv: 'Azure Key Vault',
  hc_vault: 'HashiCorp Vault',
  hckms: 'HuaweiCloud KMS',
};

const RULES = ['unencrypted_suffix', 'encrypted_suffix', 'unencrypted_regex', 'encrypted_regex'] as const;

/** The problem with a document's sops block, thrown as this; the caller names the file. */
export class MetadataError extends Error {
  override readonly name = 'MetadataError';
}

const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

function stringMap(value: unknown): Record<string, string> {
  if (!isRecord(value)) return {};
  return Object.fromEntries(Object.entries(value).map(([key, v]) => [key, v == null ? '' : String(v)]));
}

/** The key group to decrypt with: the top level, or the one entry of `key_groups`. */
function keyGroup(sops: Record<string, unknown>): Record<string, unknown> {
  const groups = list(sops.key_groups);
  if (groups.length > 1)
    throw new MetadataError(
      `has ${groups.length} key groups (Shamir secret sharing), which sluice does not support: encrypt with one group of keys`,
    );
  return groups.length === 1 && isRecord(groups[0]) ? groups[0] : sops;
}

function ruleOf(sops: Record<string, unknown>): EncryptionRule {
  for (const field of ['encrypted_comment_regex', 'unencrypted_comment_regex'])
    if (text(sops[field]))
      throw new MetadataError(`uses ${field}, which sluice does not support (comments are not kept)`);
  const set = RULES.filter((field) => text(sops[field]));
  if (set.length > 1) throw new MetadataError(`sets more than one of ${set.join(', ')}`);
  const field = set[0];
  if (field === undefined) return { kind: 'unencrypted_suffix', value: '_unencrypted' };
  const value = text(sops[field])!;
  if (field === 'encrypted_suffix' || field === 'unencrypted_suffix') return { kind: field, value };
  // Not covered by the MAC, and needed to compute it: evaluated as sops does (Go's regexp), in
  // linear time and bounded, before the MAC says whether it can be trusted.
  try {
    return { kind: field, regex: compileGoRegexp(value) };
  } catch (error) {
    if (!(error instanceof GoRegexpError)) throw error;
    throw new MetadataError(
      error.reason === 'syntax'
        ? `has an ${field} that is not a regular expression in Go's syntax, as sops reads it: ${error.message}`
        : `has an ${field} that ${error.message}`,
    );
  }
}

/** A document's `sops` block checked and read; throws MetadataError saying what is wrong. */
export function readMetadata(sops: unknown): SopsMetadata {
  if (!isRecord(sops)) throw new MetadataError('has a sops entry that is not a mapping');
  const mac = text(sops.mac);
  if (!mac)
    throw new MetadataError('has no MAC (sops.mac): refusing a file whose integrity cannot be checked');
  const lastModified = text(sops.lastmodified);
  if (!lastModified) throw new MetadataError('has no sops.lastmodified, which its MAC is bound to');
  const group = keyGroup(sops);
  const kms = list(group.kms)
    .filter(isRecord)
    .map((entry) => ({
      arn: text(entry.arn) ?? '',
      context: stringMap(entry.context),
      enc: text(entry.enc) ?? '',
    }));
  const age = list(group.age)
    .filter(isRecord)
    .map((entry) => ({ recipient: text(entry.recipient) ?? '', enc: text(entry.enc) ?? '' }));
  if (kms.length === 0 && age.length === 0) {
    const others = Object.entries(UNSUPPORTED_KEY_TYPES)
      .filter(([field]) => list(group[field]).length > 0)
      .map(([, label]) => label);
    throw new MetadataError(
      others.length > 0
        ? `is encrypted only for ${others.join(', ')}, which sluice does not support: add an AWS KMS key or an age recipient (sops updatekeys)`
        : 'names no key its data key is encrypted for',
    );
  }
  return {
    kms,
    age,
    rule: ruleOf(sops),
    macOnlyEncrypted: sops.mac_only_encrypted === true,
    mac,
    lastModified,
  };
}

/** `lastmodified` as sops formats it for the MAC's AAD (Go's time.RFC3339: no fractional seconds). */
export function macAad(lastModified: string): string {
  return lastModified.replace(/\.\d+(?=(Z|[+-]\d{2}:\d{2})$)/, '');
}
