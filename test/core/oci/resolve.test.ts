import { describe, expect, it } from 'vitest';
import { SluiceError } from '../../../functions/core/errors.ts';
import { revisionOf, selectSemverTag, sourceRef } from '../../../functions/core/oci/index.ts';

const TAGS = [
  'latest',
  'main-4f2c1a',
  'v0.9.0',
  'v1.0.0',
  '1.1.0',
  'v1.2.0',
  'v1.2.7',
  'v1.3.0-rc.1',
  'v1.10.0',
  'v2.0.0',
  'v2.1.0-beta.1',
  'sha256-abc.sig',
];

describe('selectSemverTag', () => {
  it.each([
    ['>=1.0.0 <2.0.0', 'v1.10.0'],
    ['>=1.0.0, <2.0.0', 'v1.10.0'],
    ['~1.2', 'v1.2.7'],
    ['~1.2.0', 'v1.2.7'],
    ['^1', 'v1.10.0'],
    ['1.x', 'v1.10.0'],
    ['1.1.x', '1.1.0'],
    ['*', 'v2.0.0'],
    ['>=2.0.0-0', 'v2.1.0-beta.1'],
    ['1.3.0-rc.1', 'v1.3.0-rc.1'],
    ['<1', 'v0.9.0'],
    ['>=3', undefined],
  ])('%s picks %s', (range, expected) => {
    expect(selectSemverTag(TAGS, range)).toBe(expected);
  });

  it('reads tags leniently (v1, 1.2) and prefers the tag without v on ties', () => {
    expect(selectSemverTag(['v3', '2.5'], '>=2')).toBe('v3');
    expect(selectSemverTag(['v1.0.0', '1.0.0'], '1.0.0')).toBe('1.0.0');
  });

  it('refuses an invalid range, naming it', () => {
    expect(() => selectSemverTag(TAGS, 'not a range', 'oci://r/app')).toThrow(SluiceError);
    expect(() => selectSemverTag(TAGS, 'not a range', 'oci://r/app')).toThrow(
      /oci:\/\/r\/app.*"not a range"/,
    );
  });
});

describe('sourceRef', () => {
  const url = 'oci://ghcr.io/org/app';
  const digest = `sha256:${'b'.repeat(64)}`;

  it('takes exactly one of tag, semver and digest, tag latest by default', () => {
    expect(sourceRef({ url })).toEqual({ tag: 'latest' });
    expect(sourceRef({ url, tag: 'v1' })).toEqual({ tag: 'v1' });
    expect(sourceRef({ url, semver: '^1' })).toEqual({ semver: '^1' });
    expect(sourceRef({ url, digest })).toEqual({ digest });
    expect(() => sourceRef({ url, tag: 'v1', semver: '^1' })).toThrow(/only one of.*tag, semver/);
    expect(() => sourceRef({ url, digest: 'sha256:nope' })).toThrow(/"sha256:nope"/);
  });

  it('formats revisions as Flux does', () => {
    expect(revisionOf(digest, 'v1')).toBe(`v1@${digest}`);
    expect(revisionOf(digest)).toBe(digest);
  });
});
