// The S3 stand-in as the AWS SDK reaches it: GetObject signed by a known identity, ETag and
// If-None-Match (304), and refusals of a bad signature, an unknown key and a reader the object
// does not name. Through sluice's own reader of calendar objects (functions/core/aws).
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { s3CalendarReader } from '../../functions/core/aws/s3-calendar-object.ts';
import { FUNCTION_IDENTITY, s3Client, startS3StandIn, type S3StandIn } from '../support/s3.ts';

let standIn: S3StandIn;
beforeAll(async () => {
  standIn = await startS3StandIn();
});
afterAll(() => standIn.close());

const source = (key: string) => ({ s3: { bucket: 'calendars', key } });

describe('the S3 stand-in', () => {
  it('serves an object with its ETag, and answers 304 to If-None-Match with that ETag', async () => {
    const etag = standIn.s3.putObject('calendars', 'team/freeze.ics', 'BEGIN:VCALENDAR');
    const read = s3CalendarReader(s3Client(standIn.endpoint, FUNCTION_IDENTITY));
    expect(await read(source('team/freeze.ics'), undefined)).toEqual({
      status: 'changed',
      text: 'BEGIN:VCALENDAR',
      etag,
    });
    expect(await read(source('team/freeze.ics'), etag)).toEqual({ status: 'unchanged' });
    const changed = standIn.s3.putObject('calendars', 'team/freeze.ics', 'BEGIN:VCALENDAR\r\n');
    expect(changed).not.toBe(etag);
    expect(await read(source('team/freeze.ics'), etag)).toMatchObject({ status: 'changed', etag: changed });
    const requests = standIn.s3.requests.filter((r) => r.path === '/calendars/team/freeze.ics');
    expect(requests.map((r) => r.status)).toEqual([200, 304, 200]);
    expect(requests.every((r) => r.signer === FUNCTION_IDENTITY.arn)).toBe(true);
  });

  it('refuses a request whose signature does not hold (a wrong secret), naming the code', async () => {
    standIn.s3.putObject('calendars', 'signed.ics', 'BEGIN:VCALENDAR');
    const forged = s3Client(standIn.endpoint, { ...FUNCTION_IDENTITY, secretAccessKey: 'not-the-secret' });
    await expect(
      forged.send(new GetObjectCommand({ Bucket: 'calendars', Key: 'signed.ics' })),
    ).rejects.toMatchObject({ name: 'SignatureDoesNotMatch', $metadata: { httpStatusCode: 403 } });
    const stranger = s3Client(standIn.endpoint, {
      accessKeyId: 'AKIASTRANGERXXXXXXXX',
      secretAccessKey: 'secret-of-a-stranger',
      arn: 'arn:aws:iam::999999999999:user/stranger',
    });
    await expect(
      stranger.send(new GetObjectCommand({ Bucket: 'calendars', Key: 'signed.ics' })),
    ).rejects.toMatchObject({ name: 'InvalidAccessKeyId' });
    expect(standIn.s3.requests.filter((r) => r.path === '/calendars/signed.ics').map((r) => r.code)).toEqual([
      'SignatureDoesNotMatch',
      'InvalidAccessKeyId',
    ]);
  });

  it('refuses a reader the object does not name (AccessDenied) and a missing object (NoSuchKey), through the reader with their names', async () => {
    standIn.s3.putObject('calendars', 'private.ics', 'BEGIN:VCALENDAR', {
      readers: ['arn:aws:sts::000000000000:assumed-role/someone-else/x'],
    });
    const read = s3CalendarReader(s3Client(standIn.endpoint, FUNCTION_IDENTITY));
    await expect(read(source('private.ics'), undefined)).rejects.toThrow(
      /^s3:GetObject of s3:\/\/calendars\/private.ics failed: AccessDenied: User: arn:aws:sts::000000000000:assumed-role\/sluice-deployer\/reconcile is not authorized/,
    );
    await expect(read(source('missing.ics'), undefined)).rejects.toThrow(
      's3:GetObject of s3://calendars/missing.ics failed: NoSuchKey: The specified key does not exist.',
    );
  });

  it('has the reader refuse an object over its size bound unread (by its Content-Length)', async () => {
    standIn.s3.putObject('calendars', 'large.ics', 'x'.repeat(2048));
    const read = s3CalendarReader(s3Client(standIn.endpoint, FUNCTION_IDENTITY), {
      maxBytes: 1024,
      timeoutMs: 10_000,
    });
    await expect(read(source('large.ics'), undefined)).rejects.toThrow(
      's3://calendars/large.ics is 2048 bytes, more than 1 KiB: refused unread',
    );
  });
});
