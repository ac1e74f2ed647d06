/** A Kubernetes quantity as an exact fraction: `numerator / denominator`. */
interface Fraction {
  readonly numerator: bigint;
  readonly denominator: bigint;
}

const QUANTITY = /^([+-]?)(\d*)(?:\.(\d*))?(?:([KMGTPE]i)|[eE]([+-]?\d+)|([numkMGTPE]))?$/;
const BINARY_POWER: Record<string, number> = { Ki: 1, Mi: 2, Gi: 3, Ti: 4, Pi: 5, Ei: 6 };
const DECIMAL_EXPONENT: Record<string, number> = {
  n: -9,
  u: -6,
  m: -3,
  k: 3,
  M: 6,
  G: 9,
  T: 12,
  P: 15,
  E: 18,
};
/** Larger exponents are not quantities the API server would accept; refusing them bounds the arithmetic. */
const MAX_EXPONENT = 64;

/** `cpu: 0.5`, `"500m"`, `1Gi`, `1e3` as an exact value; undefined for anything that is not a quantity. */
export function parseQuantity(value: string | number): Fraction | undefined {
  const text = typeof value === 'number' ? (Number.isFinite(value) ? String(value) : '') : value;
  const match = QUANTITY.exec(text);
  if (!match) return undefined;
  const [, sign, whole = '', fraction = '', binary, exponent, decimal] = match;
  if (whole === '' && fraction === '') return undefined;
  let numerator = BigInt(`${sign === '-' ? '-' : ''}${whole}${fraction}`);
  let denominator = 10n ** BigInt(fraction.length);
  const power = exponent !== undefined ? Number(exponent) : decimal ? DECIMAL_EXPONENT[decimal]! : 0;
  if (Math.abs(power) > MAX_EXPONENT) return undefined;
  if (power > 0) numerator *= 10n ** BigInt(power);
  if (power < 0) denominator *= 10n ** BigInt(-power);
  if (binary) numerator *= 1024n ** BigInt(BINARY_POWER[binary]!);
  return { numerator, denominator };
}

/**
 * Whether two spellings are the same quantity, as the API server canonicalises them: `0.5` and
 * `500m`, `1` and `"1"`, `1024Mi` and `1Gi`.
 */
export function sameQuantity(a: string | number, b: string | number): boolean {
  const x = parseQuantity(a);
  const y = parseQuantity(b);
  return x !== undefined && y !== undefined && x.numerator * y.denominator === y.numerator * x.denominator;
}
