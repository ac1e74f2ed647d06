// Decrypted values are tainted: one run's set of them (and of the forms they could be echoed in)
// is scrubbed from every message the run writes out: status, events, logs, diff, CLI, CloudFormation.

/** Shorter values are not scrubbed (they would mangle every message); none is ever quoted either. */
export const MIN_TAINTED_LENGTH = 4;
const REDACTED = '[redacted]';
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** The forms a value may be echoed in: as is, JSON/Go-escaped, base64, base64-decoded, line by line. */
function formsOf(value: string): string[] {
  const forms = [value, JSON.stringify(value).slice(1, -1), Buffer.from(value).toString('base64')];
  forms.push(Buffer.from(value).toString('base64url'));
  if (value.length % 4 === 0 && BASE64.test(value)) {
    const decoded = Buffer.from(value, 'base64').toString('utf8');
    if (!decoded.includes('\uFFFD')) forms.push(decoded, JSON.stringify(decoded).slice(1, -1));
  }
  for (const form of [...forms]) forms.push(...form.split(/\r?\n|\\n/));
  return forms.filter((form) => form.trim().length >= MIN_TAINTED_LENGTH);
}

/** The decrypted values of one run, and `scrub` for whatever the run writes out. */
export class Taint {
  private readonly forms = new Set<string>();
  private sorted: string[] | undefined;

  /** Taints a decrypted value (a string, number or boolean leaf). */
  add(value: unknown): void {
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') return;
    for (const form of formsOf(String(value))) this.forms.add(form);
    this.sorted = undefined;
  }

  get size(): number {
    return this.forms.size;
  }

  /** `text` with every tainted form replaced by `[redacted]`, the longest first. */
  scrub(text: string): string {
    if (this.forms.size === 0) return text;
    this.sorted ??= [...this.forms].sort((a, b) => b.length - a.length);
    let result = text;
    for (const form of this.sorted) if (result.includes(form)) result = result.split(form).join(REDACTED);
    return result;
  }

  /** Every string in `value` (objects and arrays walked) scrubbed. */
  scrubValue<T>(value: T): T {
    if (this.forms.size === 0) return value;
    if (typeof value === 'string') return this.scrub(value) as T;
    if (Array.isArray(value)) return value.map((item: unknown) => this.scrubValue(item)) as T;
    if (value !== null && typeof value === 'object' && !(value instanceof Date))
      return Object.fromEntries(
        Object.entries(value).map(([key, item]) => [key, this.scrubValue(item)]),
      ) as T;
    return value;
  }

  /**
   * `error` with its message (and stack) scrubbed, of the same class and own fields (a
   * SluiceError keeps its reason), without its cause; the same error when there was nothing to scrub.
   */
  scrubError(error: unknown): unknown {
    if (!(error instanceof Error)) return typeof error === 'string' ? this.scrub(error) : error;
    const message = this.scrub(error.message);
    if (message === error.message) return error;
    const copy = Object.assign(Object.create(Object.getPrototypeOf(error) as object) as Error, error);
    Object.defineProperty(copy, 'message', { value: message, writable: true, configurable: true });
    Object.defineProperty(copy, 'stack', {
      value: error.stack && this.scrub(error.stack),
      writable: true,
      configurable: true,
    });
    return copy;
  }
}
