import type { CallerIdentityService } from '../access/proof.ts';

/**
 * STS's answer to a presigned GetCallerIdentity request, sent to `endpoint` (the regional STS
 * endpoint, or AWS_ENDPOINT_URL_STS locally), never to a host a caller names. The presigned query
 * and the headers rebuilt by the gate function go as they are; STS checks the signature over them.
 */
export function stsCallerIdentity(endpoint: string, fetchImpl: typeof fetch = fetch): CallerIdentityService {
  return {
    async callerArn(query, headers) {
      const url = new URL(endpoint);
      url.pathname = '/';
      url.search = query;
      const response = await fetchImpl(url, {
        method: 'GET',
        headers: { ...headers, accept: 'application/json' },
        signal: AbortSignal.timeout(10_000),
      });
      const text = await response.text();
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(text) as Record<string, unknown>;
      } catch {
        // STS answers JSON when asked; anything else is reported as its text.
      }
      if (!response.ok) {
        const error = body.Error as { Code?: string; Message?: string } | undefined;
        throw new Error(
          error ? `${error.Code}: ${error.Message}` : `HTTP ${response.status} ${text.slice(0, 200)}`,
        );
      }
      const arn = (
        (body.GetCallerIdentityResponse as Record<string, unknown> | undefined)?.GetCallerIdentityResult as
          { Arn?: unknown } | undefined
      )?.Arn;
      if (typeof arn !== 'string') throw new Error(`STS answered without an ARN: ${text.slice(0, 200)}`);
      return arn;
    },
  };
}

/** The STS endpoint of a region: AWS_ENDPOINT_URL_STS when set (local stand-ins), else the regional one. */
export function stsEndpoint(region: string, override?: string): string {
  if (override) return override;
  const suffix = region.startsWith('cn-') ? 'amazonaws.com.cn' : 'amazonaws.com';
  return `https://sts.${region}.${suffix}`;
}
