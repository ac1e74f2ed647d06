import type { NotationVerification } from './notation-policy.ts';

/** Where a delivery's artifact comes from: Flux's OCIRepository `spec.url` + `spec.ref`, in one. */
export interface OciSource {
  /** `oci://host[:port]/repository/path`, without a tag or digest. */
  readonly url: string;
  /** A tag; the default when neither `semver` nor `digest` is set is `latest`. */
  readonly tag?: string;
  /** A semver range (Masterminds style, e.g. `>=1.0.0 <2.0.0`, `~1.2`, `^1`, `1.x`): the highest matching tag. */
  readonly semver?: string;
  /** A manifest digest, `sha256:<hex>`. */
  readonly digest?: string;
  /** Where registry credentials come from; `aws` by default for ECR hosts, `generic` otherwise. */
  readonly provider?: 'aws' | 'generic';
  /** Allow plain http to a registry that is not on loopback. */
  readonly insecure?: boolean;
  /** The layer to unpack; Flux's content media type by default. */
  readonly layerMediaType?: string;
  /** Refuse an artifact without a valid cosign signature by one of these keys, this KMS key or this identity. */
  readonly verify?: SignatureVerification;
}

/**
 * Flux's OCIRepository `spec.verify`: cosign signatures checked against PEM public keys, or
 * against the public half of one AWS KMS key (`cosign sign --key awskms:///<key ARN>`).
 */
export type SignatureVerification =
  | {
      readonly provider: 'cosign';
      /** PEM public keys (`cosign.pub`); a signature by any one of them is enough. */
      readonly publicKeys: readonly string[];
    }
  | {
      readonly provider: 'cosign';
      /** `arn:<partition>:kms:<region>:<account>:key/<key id>`, read with kms:GetPublicKey. */
      readonly kmsKeyArn: string;
    }
  | {
      readonly provider: 'cosign';
      /** Keyless: who the Fulcio certificate must name (oci/keyless.ts). */
      readonly keyless: KeylessIdentity;
      /** Sigstore's TrustedRoot JSON; the public-good root shipped with sluice without it. */
      readonly trustedRoot?: string;
    }
  | NotationVerification;

/** Flux's `matchOIDCIdentity`: one of each pair; a pattern (Go RE2) matches the whole value. */
export interface KeylessIdentity {
  readonly issuer?: string;
  readonly issuerRegExp?: string;
  readonly subject?: string;
  readonly subjectRegExp?: string;
}

/** Who signed a verified artifact: a key's `sha256:` fingerprint, a KMS key ARN, a keyless identity. */
export interface SignedBy {
  readonly provider: 'cosign' | 'notation';
  readonly signer: string;
}

/** Media types `flux push artifact` writes. */
export const FLUX_CONFIG_MEDIA_TYPE = 'application/vnd.cncf.flux.config.v1+json';
export const FLUX_CONTENT_MEDIA_TYPE = 'application/vnd.cncf.flux.content.v1.tar+gzip';
export const OCI_MANIFEST_MEDIA_TYPE = 'application/vnd.oci.image.manifest.v1+json';
export const DOCKER_MANIFEST_MEDIA_TYPE = 'application/vnd.docker.distribution.manifest.v2+json';
export const OCI_INDEX_MEDIA_TYPE = 'application/vnd.oci.image.index.v1+json';
export const DOCKER_LIST_MEDIA_TYPE = 'application/vnd.docker.distribution.manifest.list.v2+json';

/** Manifest annotations Flux writes and reads. */
export const ANNOTATION_CREATED = 'org.opencontainers.image.created';
export const ANNOTATION_SOURCE = 'org.opencontainers.image.source';
export const ANNOTATION_REVISION = 'org.opencontainers.image.revision';
