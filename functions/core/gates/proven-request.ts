import { gateEntryOf } from '../access/entry.ts';
import { GateEventError, parseGateEvent } from './event.ts';
import {
  gateRequestDigest,
  ProofRefused,
  unqualifiedArn,
  verifyProof,
  type CallerProof,
  type ProvenFields,
} from '../access/proof.ts';
import { handleGateEvent, type GateDeps, type GateRequestResult } from './requests.ts';
import { authorizeSigner, type UrlCaller } from '../access/signers.ts';

/** How a proven request arrived: through the gate's function URL, or a direct invocation of its alias. */
export type Transport = 'url' | 'invoke';

/**
 * A gate request that carries a proof of its sender (`{"gate","action",…,"proof":{query,nonce}}`),
 * by either transport: the function URL is a way in, not the proof. It must come through the
 * entry of its gate and action (alias `<action>_<gate>`, which IAM lets only that action's
 * grantees invoke); its author is the principal STS names for the proof, whatever the event says,
 * and it must be one the stack granted that entry (and through the URL, the URL's caller).
 * A bad event throws GateEventError, a proof that does not hold ProofRefused; nothing is written.
 */
/** Where a signed gate request goes (said when one arrives through another entry). */
export const GATE_REQUEST_ENTRY_HINT =
  "send gate requests to the gate's own entry: its alias <action>_<gate>";

export async function handleProvenRequest(
  raw: Record<string, unknown>,
  transport: Transport,
  invokedFunctionArn: string | undefined,
  deps: GateDeps,
  urlCaller?: UrlCaller,
): Promise<GateRequestResult> {
  const { proof, ...fields } = raw;
  const entry = gateEntryOf(invokedFunctionArn);
  if (!entry || !invokedFunctionArn) throw new ProofRefused(GATE_REQUEST_ENTRY_HINT);
  const request = parseGateEvent(fields, { signed: true });
  if (request.gate !== entry.gate || (request.action !== entry.action && request.action !== 'status'))
    throw new ProofRefused(
      `this entry takes ${entry.action} requests for gate '${entry.gate}', not ${request.action} requests for gate '${request.gate}'`,
    );
  if (request.action === 'status') return handleGateEvent({ ...request, source: transport }, deps);
  const principal = await provenPrincipal(
    proof,
    gateRequestDigest(fields as unknown as ProvenFields),
    invokedFunctionArn,
    deps,
    { what: `gate '${request.gate}': ${request.action}`, transport, urlCaller },
  );
  return handleGateEvent({ ...request, source: transport }, deps, { principal, verified: true });
}

/** The `proof` of a signed request, checked for shape. */
export function parseProof(raw: unknown): CallerProof {
  const proof = raw as Partial<CallerProof> | undefined;
  if (
    typeof proof !== 'object' ||
    proof === null ||
    typeof proof.query !== 'string' ||
    typeof proof.nonce !== 'string'
  )
    throw new GateEventError(
      '"proof" is missing or malformed: a signed request carries {"query","nonce"} from a presigned STS GetCallerIdentity (sluice gate open --function makes it)',
    );
  return { query: proof.query, nonce: proof.nonce };
}

/**
 * Who STS says signed `proof` for the request whose digest is `digest`, sent to
 * `invokedFunctionArn` (the nonce is taken once): never a name from the payload. The signer must
 * be a grantee of the entry the request came through (the alias of `invokedFunctionArn`), of an
 * account the stack trusts, and through the URL the caller IAM authenticated there; otherwise
 * SignerRefused names both.
 */
export async function provenPrincipal(
  proof: unknown,
  digest: string,
  invokedFunctionArn: string,
  deps: Pick<GateDeps, 'sts' | 'db' | 'clock' | 'signers'>,
  options: { readonly what: string; readonly transport: Transport; readonly urlCaller?: UrlCaller },
): Promise<Awaited<ReturnType<typeof verifyProof>>> {
  if (!deps.sts) throw new Error('the gate function has no STS endpoint to verify proofs with');
  const signer = await verifyProof(parseProof(proof), digest, {
    functionArn: unqualifiedArn(invokedFunctionArn),
    sts: deps.sts,
    db: deps.db,
    now: deps.clock.now(),
  });
  authorizeSigner(signer, invokedFunctionArn.split(':')[7] ?? '', deps.signers, {
    what: options.what,
    // Through the URL, the event's authorizer names the caller; a direct invocation has none to compare.
    ...(options.transport === 'url' && { urlCaller: options.urlCaller ?? 'absent' }),
  });
  return signer;
}
