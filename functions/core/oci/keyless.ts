// Keyless cosign signatures (`cosign sign` with an OIDC identity): the signature layer cosign v2
// writes to the `.sig` tag carries the Fulcio certificate (`dev.sigstore.cosign/certificate`) and
// Rekor's answer (`dev.sigstore.cosign/bundle`: the entry's body, log index, integrated time and
// its signed entry timestamp). That is turned into a Sigstore bundle (v0.1: an inclusion promise,
// as cosign keeps no inclusion proof in the layer) and verified by Sigstore's own library against a
// trusted root: the certificate chains to a Fulcio CA of the root at the time Rekor logged it, it
// has an SCT from a CT log of the root, Rekor's SET verifies with a log key of the root, the entry's
// body names this signature, this payload's digest and this certificate, and the signature verifies
// over the payload with the certificate's key. Then the identity policy: the certificate's issuer
// and subject (SAN), each exact or a whole-string Go (RE2) pattern.
import { createHash } from 'node:crypto';
import { bundleFromJSON } from '@sigstore/bundle';
import { TrustedRoot } from '@sigstore/protobuf-specs';
import { toSignedEntity, toTrustMaterial, Verifier } from '@sigstore/verify';
import { compileGoRegexp } from '../go-regexp.ts';
import { anchored } from './keyless-rules.ts';
import type { KeylessIdentity } from './source.ts';
import { PUBLIC_GOOD_TRUSTED_ROOT } from './sigstore-trusted-root.ts';

export const COSIGN_CERTIFICATE_ANNOTATION = 'dev.sigstore.cosign/certificate';
export const COSIGN_BUNDLE_ANNOTATION = 'dev.sigstore.cosign/bundle';

/** What is wrong with a trusted root (Sigstore's TrustedRoot JSON), or undefined when it can be used. */
export function trustedRootProblem(json: string): string | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch (error) {
    return `is not JSON (${(error as Error).message})`;
  }
  try {
    const root = TrustedRoot.fromJSON(parsed);
    if (!/^application\/vnd\.dev\.sigstore\.trustedroot(\.v[\d.]+)?\+json/.test(root.mediaType))
      return `has mediaType "${root.mediaType}", not a Sigstore trusted root (application/vnd.dev.sigstore.trustedroot+json;version=0.1)`;
    if (root.certificateAuthorities.length === 0) return 'names no certificateAuthorities (Fulcio)';
    if (root.tlogs.length === 0) return 'names no tlogs (Rekor)';
    if (root.ctlogs.length === 0) return 'names no ctlogs (the CT logs Fulcio publishes to)';
    toTrustMaterial(root);
    return undefined;
  } catch (error) {
    return `is not a usable Sigstore trusted root (${(error as Error).message})`;
  }
}

const verifiers = new Map<string, Verifier>();

/** Sigstore's verifier for a trusted root (the shipped public-good root without one), kept per root. */
function verifierFor(trustedRoot: string | undefined): Verifier {
  const key = trustedRoot ?? '';
  let verifier = verifiers.get(key);
  if (!verifier) {
    const root = TrustedRoot.fromJSON(
      trustedRoot === undefined ? PUBLIC_GOOD_TRUSTED_ROOT : JSON.parse(trustedRoot),
    );
    // One SCT, one transparency log entry, and the log's time as the time the certificate is checked at.
    verifier = new Verifier(toTrustMaterial(root), {
      ctlogThreshold: 1,
      tlogThreshold: 1,
      timestampThreshold: 1,
    });
    if (verifiers.size >= 8) verifiers.delete(verifiers.keys().next().value!);
    verifiers.set(key, verifier);
  }
  return verifier;
}

interface CosignRekorBundle {
  SignedEntryTimestamp?: unknown;
  Payload?: { body?: unknown; integratedTime?: unknown; logIndex?: unknown; logID?: unknown };
}

interface HashedRekordBody {
  kind?: unknown;
  apiVersion?: unknown;
  spec?: { signature?: { publicKey?: { content?: unknown } } };
}

/** The DER of the first certificate in `pem`, or undefined. */
function certificateDer(pem: string): Buffer | undefined {
  const match = /-----BEGIN CERTIFICATE-----([A-Za-z0-9+/=\s]+)-----END CERTIFICATE-----/.exec(pem);
  return match ? Buffer.from(match[1]!.replace(/\s/g, ''), 'base64') : undefined;
}

/** The keyless signer of one signature layer: `<subject> (issuer <issuer>)`, or why it is refused. */
export type KeylessOutcome = { readonly signer: string } | { readonly problem: string };

/**
 * Verifies one cosign signature layer made keyless: `annotations` are the layer's, `payload` its
 * blob (already checked against the layer's digest), `signature` the base64 signature annotation.
 */
export function verifyKeylessLayer(
  annotations: Readonly<Record<string, string>>,
  payload: Buffer,
  signature: string,
  identity: KeylessIdentity,
  trustedRoot: string | undefined,
): KeylessOutcome {
  const certificatePem = annotations[COSIGN_CERTIFICATE_ANNOTATION];
  if (certificatePem === undefined)
    return { problem: `no certificate (${COSIGN_CERTIFICATE_ANNOTATION}): not a keyless signature` };
  const leaf = certificateDer(certificatePem);
  if (!leaf) return { problem: `its ${COSIGN_CERTIFICATE_ANNOTATION} is not a PEM certificate` };
  const rekorJson = annotations[COSIGN_BUNDLE_ANNOTATION];
  if (rekorJson === undefined)
    return {
      problem: `no transparency log entry (${COSIGN_BUNDLE_ANNOTATION}): a keyless signature counts only once Rekor has logged it`,
    };
  let rekor: CosignRekorBundle;
  let body: HashedRekordBody;
  let bodyBytes: Buffer;
  try {
    rekor = JSON.parse(rekorJson) as CosignRekorBundle;
    bodyBytes = Buffer.from(String(rekor.Payload?.body), 'base64');
    body = JSON.parse(bodyBytes.toString('utf8')) as HashedRekordBody;
  } catch {
    return { problem: `its ${COSIGN_BUNDLE_ANNOTATION} is not Rekor's entry (JSON with a base64 JSON body)` };
  }
  const payloadFields = rekor.Payload ?? {};
  if (
    typeof rekor.SignedEntryTimestamp !== 'string' ||
    typeof payloadFields.logID !== 'string' ||
    !/^[0-9a-f]{64}$/.test(payloadFields.logID) ||
    !Number.isSafeInteger(payloadFields.integratedTime) ||
    !Number.isSafeInteger(payloadFields.logIndex)
  )
    return {
      problem: `its ${COSIGN_BUNDLE_ANNOTATION} lacks a signed entry timestamp, log ID, log index or integrated time`,
    };
  if (body.kind !== 'hashedrekord' || typeof body.apiVersion !== 'string')
    return {
      problem: `its transparency log entry is a ${String(body.kind)} entry, not the hashedrekord cosign logs`,
    };
  // The entry must name this very certificate: Sigstore's library compares the signature and digest
  // the entry names with the bundle's, not its certificate.
  const logged = body.spec?.signature?.publicKey?.content;
  const loggedDer =
    typeof logged === 'string' ? certificateDer(Buffer.from(logged, 'base64').toString('utf8')) : undefined;
  if (!loggedDer?.equals(leaf))
    return { problem: 'its transparency log entry names another certificate than the signature layer' };

  let signer: ReturnType<Verifier['verify']>;
  try {
    const bundle = bundleFromJSON({
      mediaType: 'application/vnd.dev.sigstore.bundle+json;version=0.1',
      verificationMaterial: {
        x509CertificateChain: { certificates: [{ rawBytes: leaf.toString('base64') }] },
        tlogEntries: [
          {
            logIndex: String(payloadFields.logIndex),
            logId: { keyId: Buffer.from(payloadFields.logID, 'hex').toString('base64') },
            kindVersion: { kind: body.kind, version: body.apiVersion },
            integratedTime: String(payloadFields.integratedTime),
            inclusionPromise: { signedEntryTimestamp: rekor.SignedEntryTimestamp },
            canonicalizedBody: bodyBytes.toString('base64'),
          },
        ],
        timestampVerificationData: { rfc3161Timestamps: [] },
      },
      messageSignature: {
        messageDigest: {
          algorithm: 'SHA2_256',
          digest: createHash('sha256').update(payload).digest('base64'),
        },
        signature,
      },
    });
    signer = verifierFor(trustedRoot).verify(toSignedEntity(bundle, payload));
  } catch (error) {
    return { problem: sigstoreProblem(error) };
  }
  const subject = signer.identity?.subjectAlternativeName;
  const issuer = signer.identity?.extensions?.issuer;
  const found = `${subject ?? '(no subject)'} (issuer ${issuer ?? '(none)'})`;
  const subjectRule = rule('subject', identity.subject, identity.subjectRegExp);
  const issuerRule = rule('issuer', identity.issuer, identity.issuerRegExp);
  const failed = [
    !subjectRule.matches(subject) && subjectRule.named,
    !issuerRule.matches(issuer) && issuerRule.named,
  ].filter(Boolean);
  if (failed.length) return { problem: `signed by ${found}, which does not match ${failed.join(' and ')}` };
  return { signer: `${subject!} (issuer ${issuer!})` };
}

/** An identity rule: exact, or a whole-string Go pattern. */
function rule(field: 'subject' | 'issuer', exact: string | undefined, pattern: string | undefined) {
  if (pattern !== undefined) {
    const compiled = compileGoRegexp(anchored(pattern));
    return {
      named: `${field}RegExp ${JSON.stringify(pattern)}`,
      matches: (value: string | undefined) => {
        if (value === undefined || !compiled.fits(value)) return false;
        return compiled.test(value);
      },
    };
  }
  return {
    named: `${field} ${JSON.stringify(exact)}`,
    matches: (value: string | undefined) => value === exact,
  };
}

/** Sigstore's verification error, said as what failed. */
function sigstoreProblem(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  const message = (error as Error).message;
  switch (code) {
    case 'CERTIFICATE_ERROR':
      return /SCT/.test(message)
        ? `its certificate has no SCT from a CT log of the trusted root (${message})`
        : `its certificate does not chain to a Fulcio CA of the trusted root valid when Rekor logged it (${message})`;
    case 'TLOG_INCLUSION_PROMISE_ERROR':
      return `its transparency log entry's signed entry timestamp does not verify with a Rekor key of the trusted root (${message})`;
    case 'TLOG_BODY_ERROR':
      return `its transparency log entry is not this signature's (${message})`;
    case 'SIGNATURE_ERROR':
      return "the signature does not verify over the payload with the certificate's key";
    case 'TIMESTAMP_ERROR':
      return `it has no usable timestamp (${message})`;
    default:
      return `Sigstore verification failed${typeof code === 'string' ? ` (${code})` : ''}: ${message}`;
  }
}
