import { describe, expect, it } from 'vitest';
import { parseQuantity, sameQuantity } from '../../../functions/core/manifests/quantity.ts';

describe('sameQuantity', () => {
  it.each([
    [0.5, '500m'],
    ['0.5', '500m'],
    [1, '1'],
    [2, '2000m'],
    ['1024Mi', '1Gi'],
    ['1Gi', '1073741824'],
    ['1e3', '1k'],
    ['1E3', '1k'],
    ['100m', '0.1'],
    ['.5', '500m'],
    ['1.', '1'],
    ['+1', '1'],
    ['0', '0'],
    ['1500u', '1500u'],
    [0.000001, '1u'],
    ['129e6', '129M'],
  ])('%j is the same quantity as %j', (a, b) => {
    expect(sameQuantity(a, b)).toBe(true);
    expect(sameQuantity(b, a)).toBe(true);
  });

  it.each([
    [0.5, '50m'],
    ['1Gi', '1G'],
    ['1Mi', '1M'],
    ['1', '-1'],
    ['1E', '1E3'],
  ])('%j is not the same quantity as %j', (a, b) => {
    expect(sameQuantity(a, b)).toBe(false);
  });

  it.each(['', 'abc', '1 Gi', '1Gb', 'Gi', '.', '1e', '1e999', '0x10', '1.2.3', 'v1'])(
    '%j is not a quantity',
    (text) => {
      expect(parseQuantity(text)).toBeUndefined();
      expect(sameQuantity(text, text)).toBe(false);
    },
  );

  it('refuses numbers that are not finite', () => {
    expect(parseQuantity(Number.NaN)).toBeUndefined();
    expect(parseQuantity(Number.POSITIVE_INFINITY)).toBeUndefined();
  });
});
