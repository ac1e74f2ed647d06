// String formats as the API server checks them in CRD schemas (kube-openapi's strfmt), for ajv;
// `pattern` is Go's regexp (crd-schema.ts, go-regexp.ts). Only formats whose Go check is mirrored exactly are listed: any other
// format passes here, so nothing the server accepts is refused (the server still checks it).
import type { FormatDefinition } from 'ajv';

/** Go's strfmt names formats without dashes: `date-time` and `datetime` are one format. */
export function normalizeFormat(format: unknown): string | undefined {
  return typeof format === 'string' ? format.replaceAll('-', '') : undefined;
}

/** Go's time.Parse with layout `2006-01-02`: four-digit year, real month and day of that month. */
export function isDate(text: string): boolean {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!match) return false;
  const [year, month, day] = match.slice(1).map(Number) as [number, number, number];
  if (month < 1 || month > 12 || day < 1) return false;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]!;
  return day <= days;
}

// kube-openapi's DateTimePattern, `.` included: any character may separate the fraction.
const TIME = /^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$/u;

/** kube-openapi's strfmt.IsDateTime: the date before the first `t` (any case), then the time. */
export function isDateTime(text: string): boolean {
  if (text.length < 4) return false;
  const parts = text.toLowerCase().split('t');
  if (parts.length < 2 || !isDate(parts[0]!)) return false;
  const match = TIME.exec(parts[1]!);
  return match !== null && match[1]! <= '23' && match[2]! <= '59' && match[3]! <= '59';
}

const matching = (pattern: RegExp): FormatDefinition<string> => ({
  type: 'string',
  validate: (text: string) => pattern.test(text),
});

/** Formats by normalized name; ajv applies them to strings only, as the API server does. */
export const K8S_FORMATS: Readonly<Record<string, FormatDefinition<string>>> = {
  date: { type: 'string', validate: isDate },
  datetime: { type: 'string', validate: isDateTime },
  uuid: matching(/^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i),
  uuid3: matching(/^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i),
  uuid4: matching(/^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i),
  uuid5: matching(/^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i),
  // govalidator.IsBase64: padded standard alphabet, not empty.
  byte: matching(/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$/),
};
