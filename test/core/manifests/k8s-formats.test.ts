// Go's format and pattern semantics, as kube-apiserver 1.33 applied them to CRD schemas.
import { describe, expect, it } from 'vitest';
import { isDate, isDateTime } from '../../../functions/core/manifests/k8s-formats.ts';

describe('isDateTime (kube-openapi strfmt.IsDateTime)', () => {
  it.each([
    '2024-01-02T03:04:05Z',
    '2024-01-02T03:04:05.123+02:00',
    '2024-01-02t03:04:05z',
    '2024-01-02T23:04:05+99:99', // offsets are not range-checked
    '2024-01-02T03:04:05x5Z', // any character before the fraction
    '2024-01-02T03:04:05ZT', // only the part after the first t is read
  ])('accepts %s', (text) => expect(isDateTime(text)).toBe(true));

  it.each([
    '',
    'yesterday',
    '2024-01-02T03:04:05', // no zone
    '2024-01-02 03:04:05Z',
    '2024-02-30T03:04:05Z',
    '2024-13-02T03:04:05Z',
    '2024-01-02T24:04:05Z',
    '2024-01-02T03:04:60Z',
    '2024-01-02T03:04:05.Z',
  ])('refuses %s', (text) => expect(isDateTime(text)).toBe(false));
});

describe('isDate (Go time.Parse 2006-01-02)', () => {
  it('knows month lengths and leap years', () => {
    expect(['2024-02-29', '2000-02-29', '2023-12-31'].map(isDate)).toEqual([true, true, true]);
    expect(['2023-02-29', '1900-02-29', '2024-04-31', '2024-1-02', '', '2024-00-10'].map(isDate)).toEqual([
      false,
      false,
      false,
      false,
      false,
      false,
    ]);
  });
});
