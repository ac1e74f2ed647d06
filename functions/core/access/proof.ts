import { createHash } from 'node:crypto';
import { claimProofNonce } from '../store/proof-nonces.ts';
import type { TableClient } from '../store/table-client.ts';

/**
 * A proof of who sent a gate request: a presigned STS `GetCallerIdentity` request (its query
 * string) whose signed headers bind it to this request, this gate function and a nonce. The gate
 * function sends it to STS itself, so the identity is AWS's answer, never the payload's word (the
 * pattern of aws-iam-authenticator and Vault's AWS auth method).
 */
export interface CallerProof {
  /** The presigned request's query string: `Action=GetCallerIdentity&Version=2011-06-15&X-Amz-…`. */
  readonly query: string;
  /** The random value signed as `x-sluice-nonce`; each proof is taken once. */
  readonly nonce: string;
}

/** The headers a proof must sign, besides `host`. */
export const PROOF_HEADERS = {
  requestHash: 'x-sluice-request-hash',
  nonce: 'x-sluice-nonce',
  functionArn: 'x-sluice-function',
} as const;

/** The longest a proof lives: its X-Amz-Expires, and how old its signing time may be. */
export const PROOF_LIFETIME_S = 300;
/** How far ahead of this side's clock a signing time may be (clock skew). */
const MAX_SKEW_MS = 60_000;
const QUERY_PARAMS = new Set([
  'Action',
  'Version',
  'X-Amz-Algorithm',
  'X-Amz-Credential',
  'X-Amz-Date',
  'X-Amz-Expires',
  'X-Amz-SignedHeaders',
  'X-Amz-Security-Token',
  'X-Amz-Signature',
]);
const NONCE = /^[A-Za-z0-9_-]{16,128}$/;

/** The fields of a gate request a proof covers, as the CLI sends them. */
export interface ProvenFields {
  readonly gate: string;
  readonly action: string;
  readonly window?: string;
  readonly reason?: string;
  readonly revision?: string;
  readonly deliveries?: readonly string[];
}

/** The hash a proof signs: sha256 over the request's fields in a fixed order (absent ones as null). */
export function gateRequestDigest(fields: ProvenFields): string {
  const canonical = JSON.stringify([
    'sluice-gate-request-v1',
    fields.gate,
    fields.action,
    fields.window ?? null,
    fields.reason ?? null,
    fields.revision ?? null,
    // Appended only when present, so that requests without it hash as they always did.
    ...(fields.deliveries !== undefined ? [fields.deliveries] : []),
  ]);
  return createHash('sha256').update(canonical).digest('hex');
}

/** The function's own ARN without alias or version: what a proof is bound to. */
export const unqualifiedArn = (invokedFunctionArn: string): string =>
  invokedFunctionArn.split(':').slice(0, 7).join(':');

/** Asks STS who signed a presigned GetCallerIdentity request (the AWS adapter in core/aws). */
export interface CallerIdentityService {
  /** The ARN STS returns for `query` sent with `headers`; throws with STS's reason when it refuses. */
  callerArn(query: string, headers: Readonly<Record<string, string>>): Promise<string>;
}

/** A proof that does not hold; nothing was recorded. */
export class ProofRefused extends Error {
  override readonly name = 'ProofRefused';
}

/**
 * The ARN of whoever signed `proof` for exactly the request hashed as `requestHash` (gateRequestDigest,
 * or an override's), sent to `functionArn`: the proof's shape
 * and lifetime are checked here, STS checks the signature over the headers rebuilt on this side
 * (so a proof for another request, function or nonce fails there), and its nonce is taken once.
 */
export async function verifyProof(
  proof: CallerProof,
  requestHash: string,
  context: {
    readonly functionArn: string;
    readonly sts: CallerIdentityService;
    readonly db: TableClient;
    readonly now: Date;
  },
): Promise<string> {
  if (!NONCE.test(proof.nonce))
    throw new ProofRefused('the proof\'s nonce must be 16 to 128 characters of A-Z, a-z, 0-9, "_" and "-"');
  const params = new URLSearchParams(proof.query);
  const names = [...params.keys()];
  const unknown = names.filter((name) => !QUERY_PARAMS.has(name));
  if (unknown.length > 0 || new Set(names).size !== names.length)
    throw new ProofRefused(
      `the proof's query may carry only ${[...QUERY_PARAMS].join(', ')}, each once${unknown.length > 0 ? `, not ${unknown.join(', ')}` : ''}`,
    );
  if (params.get('Action') !== 'GetCallerIdentity' || params.get('Version') !== '2011-06-15')
    throw new ProofRefused(
      'the proof must be a presigned STS GetCallerIdentity request (Version 2011-06-15)',
    );
  const service = (params.get('X-Amz-Credential') ?? '').split('/')[3];
  if (service !== 'sts')
    throw new ProofRefused(`the proof is signed for ${service ?? 'no service'}, not sts`);
  const signed = (params.get('X-Amz-SignedHeaders') ?? '').split(';').sort();
  const required = ['host', ...Object.values(PROOF_HEADERS)].sort();
  if (signed.join(';') !== required.join(';'))
    throw new ProofRefused(
      `the proof must sign exactly the headers ${required.join(', ')}, not ${signed.join(', ')}`,
    );
  const expires = Number(params.get('X-Amz-Expires'));
  if (!Number.isInteger(expires) || expires < 1 || expires > PROOF_LIFETIME_S)
    throw new ProofRefused(`the proof's X-Amz-Expires must be 1 to ${PROOF_LIFETIME_S} seconds`);
  const signedAt = Date.parse(
    (params.get('X-Amz-Date') ?? '').replace(
      /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/,
      '$1-$2-$3T$4:$5:$6Z',
    ),
  );
  const now = context.now.getTime();
  if (Number.isNaN(signedAt)) throw new ProofRefused('the proof has no signing time (X-Amz-Date)');
  if (signedAt > now + MAX_SKEW_MS) throw new ProofRefused('the proof is signed in the future');
  if (now > signedAt + expires * 1000) throw new ProofRefused('the proof has expired: sign a new request');

  let arn: string;
  try {
    arn = await context.sts.callerArn(proof.query, {
      [PROOF_HEADERS.requestHash]: requestHash,
      [PROOF_HEADERS.nonce]: proof.nonce,
      [PROOF_HEADERS.functionArn]: context.functionArn,
    });
  } catch (error) {
    throw new ProofRefused(
      `STS did not verify the proof (${(error as Error).message}): it must be signed for this very request to ${context.functionArn}`,
    );
  }
  if (!(await claimProofNonce(context.db, proof.nonce, new Date(signedAt + expires * 1000 + MAX_SKEW_MS))))
    throw new ProofRefused('the proof was used already: each signed request is taken once');
  return arn;
}
