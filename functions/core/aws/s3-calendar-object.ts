import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { formatBytes, LIVE_CALENDAR_LIMITS } from '../limits.ts';
import { readBounded, type ReadCalendarSource } from '../calendars/live-calendars.ts';

/**
 * `s3:GetObject` of a live calendar's object, conditional on the ETag of its last good copy
 * (If-None-Match: S3 answers 304 when it has not changed), bounded in size (its Content-Length
 * and then the bytes as they stream in) and time (one deadline for the request and the body).
 */
export function s3CalendarReader(
  s3: S3Client,
  limits: { readonly maxBytes: number; readonly timeoutMs: number } = LIVE_CALENDAR_LIMITS,
): ReadCalendarSource {
  return async (source, etag) => {
    if (!('s3' in source)) throw new Error('is not an S3 object');
    const { bucket, key } = source.s3;
    const abort = new AbortController();
    const timer = setTimeout(
      () => abort.abort(new Error(`no answer within ${limits.timeoutMs / 1000}s`)),
      limits.timeoutMs,
    );
    try {
      let answer;
      try {
        answer = await s3.send(
          new GetObjectCommand({
            Bucket: bucket,
            Key: key,
            ...(etag !== undefined && { IfNoneMatch: etag }),
          }),
          { abortSignal: abort.signal },
        );
      } catch (error) {
        const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
        if (status === 304) return { status: 'unchanged' };
        if (abort.signal.aborted) throw abort.signal.reason as Error;
        const name = (error as Error).name;
        throw new Error(`s3:GetObject of s3://${bucket}/${key} failed: ${name}: ${(error as Error).message}`);
      }
      const body = answer.Body as (AsyncIterable<Uint8Array> & { destroy?: () => void }) | undefined;
      if (answer.ContentLength !== undefined && answer.ContentLength > limits.maxBytes) {
        body?.destroy?.();
        throw new Error(
          `s3://${bucket}/${key} is ${answer.ContentLength} bytes, more than ${formatBytes(limits.maxBytes)}: refused unread`,
        );
      }
      if (!body) throw new Error(`s3:GetObject of s3://${bucket}/${key} answered no body`);
      const text = await readBounded(body, limits.maxBytes, `s3://${bucket}/${key}`, abort.signal);
      return { status: 'changed', text, ...(answer.ETag !== undefined && { etag: answer.ETag }) };
    } finally {
      clearTimeout(timer);
    }
  };
}
