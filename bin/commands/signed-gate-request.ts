import { Sha256 } from '@aws-crypto/sha256-js';
import { GetFunctionUrlConfigCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import { SignatureV4 } from '@smithy/signature-v4';
import { randomBytes } from 'node:crypto';
import type { GateAction } from '../../functions/core/config/index.ts';
import { stsEndpoint } from '../../functions/core/aws/sts-caller-identity.ts';
import { gateAliasName } from '../../functions/core/access/entry.ts';
import {
  gateRequestDigest,
  PROOF_HEADERS,
  PROOF_LIFETIME_S,
  unqualifiedArn,
  type CallerProof,
} from '../../functions/core/access/proof.ts';
import type { GateRequestResult } from '../../functions/core/gates/requests.ts';

/** The fields a signed request may carry: who, when and from where are the function's to record. */
export interface SignedGateRequest {
  readonly gate: string;
  readonly action: GateAction;
  readonly window?: string;
  readonly reason?: string;
  readonly revision?: string;
  readonly deliveries?: readonly string[];
}

type SignerCredentials = ConstructorParameters<typeof SignatureV4>[0]['credentials'];

/** A gate's entry for one action: its function URL and the function's ARN (what a proof is bound to). */
export interface GateEntryTarget {
  readonly url: string;
  readonly functionArn: string;
}

const FUNCTION_ARN = /^arn:aws[\w-]*:lambda:[a-z0-9-]+:\d{12}:function:[\w-]+(?::[\w-]+)?$/;

/**
 * The entry of a gate for `action` (alias `<action>_<gate>`): its URL as given, or looked up with
 * GetFunctionUrlConfig, and the gate function's unqualified ARN, from `--function` when it is an
 * ARN, else from the lookup.
 */
export function gateEntry(
  functionName: string | undefined,
  gate: string,
  action: GateAction,
  url?: string,
): Promise<GateEntryTarget> {
  return entryTarget(functionName, gateAliasName(gate, action), `gate '${gate}'s ${action} entry`, url);
}

/**
 * The entry of the gate function named by its alias (`qualifier`): its URL as given, or looked up
 * with GetFunctionUrlConfig, and the function's unqualified ARN.
 */
export async function entryTarget(
  functionName: string | undefined,
  qualifier: string,
  what: string,
  url?: string,
): Promise<GateEntryTarget> {
  if (url !== undefined) {
    if (!functionName || !FUNCTION_ARN.test(functionName))
      throw new Error(
        "--url needs --function <the gate function's ARN>: the identity proof is bound to that function",
      );
    return { url, functionArn: unqualifiedArn(functionName) };
  }
  if (!functionName) throw new Error('name the gate function with --function');
  try {
    const { FunctionUrl, FunctionArn } = await new LambdaClient({}).send(
      new GetFunctionUrlConfigCommand({ FunctionName: functionName, Qualifier: qualifier }),
    );
    if (FunctionUrl && FunctionArn) return { url: FunctionUrl, functionArn: unqualifiedArn(FunctionArn) };
  } catch (error) {
    throw new Error(
      `could not find the URL of ${what} (function ${functionName}, alias ${qualifier}): ${(error as Error).message}; is it deployed, and may you call lambda:GetFunctionUrlConfig on it (grantGateRequests and grantBreakGlass give it)?`,
      { cause: error },
    );
  }
  throw new Error(`function ${functionName}, alias ${qualifier}, has no function URL`);
}

/** `<id>.lambda-url.<region>.on.aws` → region; otherwise the SDK's configured region. */
function regionOf(url: URL): string {
  const fromHost = /\.lambda-url\.([a-z0-9-]+)\.on\.aws$/.exec(url.hostname)?.[1];
  const region = fromHost ?? process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION;
  if (!region) throw new Error(`cannot tell the AWS region of ${url.origin}: set AWS_REGION`);
  return region;
}

/**
 * A proof of who you are for exactly `request` to `functionArn`: a presigned STS GetCallerIdentity
 * (valid 5 minutes) whose signed headers carry the request's hash, a fresh nonce and the function.
 * The gate function sends it to STS itself; it never reads an identity from the payload.
 */
export function proveIdentity(
  request: SignedGateRequest,
  functionArn: string,
  region: string,
  credentials: SignerCredentials = defaultProvider(),
): Promise<CallerProof> {
  return proveRequest(gateRequestDigest(request), functionArn, region, credentials);
}

/** A proof of who you are for the request hashed as `requestHash` (a gate request's, or an override's). */
export async function proveRequest(
  requestHash: string,
  functionArn: string,
  region: string,
  credentials: SignerCredentials = defaultProvider(),
): Promise<CallerProof> {
  const endpoint = new URL(stsEndpoint(region, process.env.AWS_ENDPOINT_URL_STS));
  const nonce = randomBytes(24).toString('base64url');
  const signer = new SignatureV4({ service: 'sts', region, credentials, sha256: Sha256 });
  const presigned = await signer.presign(
    {
      method: 'GET',
      protocol: endpoint.protocol,
      hostname: endpoint.hostname,
      ...(endpoint.port && { port: Number(endpoint.port) }),
      path: '/',
      query: { Action: 'GetCallerIdentity', Version: '2011-06-15' },
      headers: {
        host: endpoint.host,
        [PROOF_HEADERS.requestHash]: requestHash,
        [PROOF_HEADERS.nonce]: nonce,
        [PROOF_HEADERS.functionArn]: functionArn,
      },
    },
    { expiresIn: PROOF_LIFETIME_S },
  );
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(presigned.query ?? {}))
    for (const one of Array.isArray(value) ? value : [value]) if (one !== null) query.append(name, one);
  return { query: query.toString(), nonce };
}

/**
 * Sends a gate request with a proof of your identity to a gate's function URL (SigV4-signed too,
 * as the URL's AWS_IAM auth wants). A refusal fails with the function's message, naming the gate
 * and the URL.
 */
export function sendSignedGateRequest(
  entry: GateEntryTarget,
  request: SignedGateRequest,
): Promise<GateRequestResult> {
  return sendSigned(entry, request, gateRequestDigest(request), `gate '${request.gate}': ${request.action}`);
}

/**
 * Sends `request` (hashed as `requestHash`) with a proof of your identity to an entry's function
 * URL, SigV4-signed as its AWS_IAM auth wants; a refusal fails with the function's message after
 * `what`, naming the URL.
 */
export async function sendSigned<T>(
  entry: GateEntryTarget,
  request: object,
  requestHash: string,
  what: string,
): Promise<T> {
  const url = new URL(entry.url);
  const region = regionOf(url);
  const proof = await proveRequest(requestHash, entry.functionArn, region);
  const body = JSON.stringify({ ...request, proof });
  const signer = new SignatureV4({
    service: 'lambda',
    region,
    credentials: defaultProvider(),
    sha256: Sha256,
  });
  const signed = await signer.sign({
    method: 'POST',
    protocol: url.protocol,
    hostname: url.hostname,
    ...(url.port && { port: Number(url.port) }),
    path: url.pathname,
    headers: { host: url.host, 'content-type': 'application/json' },
    body,
  });
  const response = await fetch(url, { method: 'POST', headers: signed.headers, body });
  const text = await response.text();
  let answer: unknown;
  try {
    answer = JSON.parse(text);
  } catch {
    answer = undefined;
  }
  if (!response.ok) {
    const record = (answer ?? {}) as { message?: string; Message?: string };
    const reason = record.message ?? record.Message ?? (text || response.statusText);
    throw new Error(`${what} refused by ${url.origin}${url.pathname} (HTTP ${response.status}): ${reason}`);
  }
  return answer as T;
}
