// The taint of decrypted values (pure logic): every form a value could be echoed in is scrubbed.
import { describe, expect, it } from 'vitest';
import { SluiceError } from '../../functions/core/errors.ts';
import { FRAGMENT_LENGTH, Taint } from '../../functions/core/taint.ts';

const secret = 'sluice-plaintext-7f3a "quoted"\nsecond-line';

describe('Taint', () => {
  const taint = new Taint();
  taint.add(secret);
  taint.add(Buffer.from('from-base64-data').toString('base64'));
  taint.add('ab');

  it.each([
    ['as is', secret],
    ['JSON-escaped (as a Status message or --json quotes it)', JSON.stringify(secret)],
    ['base64 (as a Secret stores stringData)', Buffer.from(secret).toString('base64')],
    ['line by line', 'the second line: second-line'],
    ['a base64 data value, decoded', 'from-base64-data'],
    ['a base64 data value, as is', Buffer.from('from-base64-data').toString('base64')],
  ])('scrubs a value %s', (_, text) => {
    const scrubbed = taint.scrub(`refused: ${text}.`);
    expect(scrubbed).toContain('[redacted]');
    expect(scrubbed).not.toContain('sluice-plaintext');
    expect(scrubbed).not.toContain('second-line');
    expect(scrubbed).not.toContain('from-base64-data');
  });

  it('leaves short values (they would mangle every message) and untainted text alone', () => {
    expect(taint.scrub('ab: nothing here')).toBe('ab: nothing here');
  });

  it('scrubs errors keeping their reason, and every string of a value', () => {
    const error = taint.scrubError(new SluiceError('ValidationFailed', `x: ${secret}`));
    expect(error).toBeInstanceOf(SluiceError);
    expect(error).toMatchObject({ reason: 'ValidationFailed', message: 'x: [redacted]' });
    expect(taint.scrubValue({ a: [secret], n: 1 })).toEqual({ a: ['[redacted]'], n: 1 });
  });
});

describe('Taint: parts of values', () => {
  const value = 'aX9-long-secret-value-with-no-pattern-42';
  const taint = new Taint();
  taint.add(value);
  const parts = (length: number) =>
    Array.from({ length: value.length - length + 1 }, (_, start) => value.slice(start, start + length));

  it.each([FRAGMENT_LENGTH, 12, 20])('scrubs every part of %i characters, as is and in base64', (length) => {
    for (const part of parts(length)) {
      for (const form of [
        part,
        Buffer.from(part).toString('base64'),
        Buffer.from(part).toString('base64url'),
      ]) {
        // The base64 of a part ends in a group that depends on its end: what precedes it is a quote.
        const quoted = form === part ? part : form.slice(0, form.length - 4);
        if (quoted.length < FRAGMENT_LENGTH) continue;
        const scrubbed = taint.scrub(`refused: <${quoted}>`);
        expect(scrubbed, `${form} (of ${part})`).toMatch(/^refused: <[^>]*\[redacted\][^>]*>$/);
        expect(scrubbed.replace(/\[redacted\]/g, '').length).toBeLessThan(`refused: <>`.length + 4);
      }
    }
  });

  it('leaves parts shorter than FRAGMENT_LENGTH and other text alone', () => {
    expect(taint.scrub(`refused: ${value.slice(4, 4 + FRAGMENT_LENGTH - 1)}`)).toBe(
      `refused: ${value.slice(4, 4 + FRAGMENT_LENGTH - 1)}`,
    );
    expect(taint.scrub('an ordinary message about a ConfigMap')).toBe(
      'an ordinary message about a ConfigMap',
    );
  });

  it('matches a value shorter than FRAGMENT_LENGTH whole', () => {
    const short = new Taint();
    short.add('pa55wd');
    expect(short.scrub('refused: pa55wd!')).toBe('refused: [redacted]!');
    expect(short.scrub('refused: pa55')).toBe('refused: pa55');
  });

  it("taints a Secret's data (decoded) and stringData; other kinds are left alone", () => {
    const secrets = new Taint();
    secrets.addSecret({
      apiVersion: 'v1',
      kind: 'Secret',
      data: { a: Buffer.from('data-value-0123456').toString('base64') },
      stringData: { b: 'string-data-value-789' },
    } as never);
    secrets.addSecret({ apiVersion: 'v1', kind: 'ConfigMap', data: { c: 'config-map-value' } } as never);
    expect(secrets.scrub('x value-0123 y data-value-789 z config-map-value')).toBe(
      'x [redacted] y [redacted] z config-map-value',
    );
  });

  it('withholds every message, saying why, when the values to check it against could not be learned', async () => {
    const unread = new Taint();
    unread.add(value);
    let reads = 0;
    unread.learnWith(async () => {
      reads++;
      throw new Error('secrets "api-token" is forbidden');
    });
    expect(unread.scrub('an ordinary message')).toBe('an ordinary message');
    await Promise.all([unread.learned(), unread.learned()]);
    expect(reads).toBe(1);
    expect(unread.scrub('an ordinary message')).toBe(
      '[message withheld: it may quote a Secret\'s value, and the values of the delivery\'s Secrets could not be read to check it: secrets "api-token" is forbidden]',
    );
  });
});
