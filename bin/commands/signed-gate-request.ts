import { Sha256 } from '@aws-crypto/sha256-js';
import { GetFunctionUrlConfigCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import { SignatureV4 } from '@smithy/signature-v4';
import type { GateAction } from '../../functions/core/config/index.ts';
import { gateAliasName } from '../../functions/core/gates/entry.ts';
import type { GateRequestResult } from '../../functions/core/gates/requests.ts';

/** The fields a signed request may carry: who, when and from where are the function's to record. */
export interface SignedGateRequest {
  readonly gate: string;
  readonly action: GateAction;
  readonly window?: string;
  readonly reason?: string;
  readonly revision?: string;
}

/** The URL of a gate's entry for `action`: the function URL of the alias `<action>_<gate>`. */
export async function gateEntryUrl(functionName: string, gate: string, action: GateAction): Promise<string> {
  const qualifier = gateAliasName(gate, action);
  try {
    const { FunctionUrl } = await new LambdaClient({}).send(
      new GetFunctionUrlConfigCommand({ FunctionName: functionName, Qualifier: qualifier }),
    );
    if (FunctionUrl) return FunctionUrl;
  } catch (error) {
    throw new Error(
      `could not find the URL of gate '${gate}'s ${action} entry (function ${functionName}, alias ${qualifier}): ${(error as Error).message}; is the gate deployed, and may you call lambda:GetFunctionUrlConfig on it (grantGateRequests gives it)?`,
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
 * Sends a gate request to a gate's function URL, signed with SigV4 under the caller's AWS
 * credentials (IAM authenticates it; the function records the verified caller). A refusal fails
 * with the function's message, naming the gate and the URL.
 */
export async function sendSignedGateRequest(
  entryUrl: string,
  request: SignedGateRequest,
): Promise<GateRequestResult> {
  const url = new URL(entryUrl);
  const body = JSON.stringify(request);
  const signer = new SignatureV4({
    service: 'lambda',
    region: regionOf(url),
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
    throw new Error(
      `gate '${request.gate}': ${request.action} refused by ${url.origin}${url.pathname} (HTTP ${response.status}): ${reason}`,
    );
  }
  return answer as GateRequestResult;
}
