// The taint of decrypted values (pure logic): every form a value could be echoed in is scrubbed.
import { describe, expect, it } from 'vitest';
import { SluiceError } from '../../functions/core/errors.ts';
import { Taint } from '../../functions/core/taint.ts';

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
