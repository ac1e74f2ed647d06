// Secret values are tainted: one run's set of them (the values it decrypted, the Secrets its
// revision holds, and, learned when a message is about to be written, the values of every Secret
// the delivery owns in the cluster) is scrubbed from every message the run writes out: status,
// events, logs, diff, CLI, CloudFormation. Scrubbed whole or in part: any run of FRAGMENT_LENGTH
// characters of a value, in any form it could be echoed in, in any case, is redacted.

/** Values shorter than this are not scrubbed (they would mangle every message). */
export const MIN_TAINTED_LENGTH = 4;
/**
 * Any FRAGMENT_LENGTH characters in a row of a value's form are a quote of it (10 characters: 7.5
 * bytes of its base64, 60 bits of a random token). A form shorter than this is matched whole.
 * Shorter would redact common words that values contain ("password", "database") from every message.
 */
export const FRAGMENT_LENGTH = 10;
/**
 * How many fragments one run keeps at most (about 12 per character of the Secrets' values).
 * Past it, every message is withheld whole: the run cannot check it.
 */
export const MAX_TAINTED_FRAGMENTS = 2_000_000;
const REDACTED = '[redacted]';
/**
 * The API server's words before an admission policy's own message. What follows is computed by
 * the policy's messageExpression, which may read a Secret (its parameter, `paramKind: Secret`)
 * and quote it in a form no scrubber recognises: in pieces shorter than a fragment, reversed,
 * interleaved. An artifact may carry such a policy, so it is not scrubbed but withheld.
 */
const POLICY_DENIAL = /ValidatingAdmissionPolicy '[^']*' with binding '[^']*' denied request: /;
const POLICY_MESSAGE_WITHHELD =
  "[withheld: the delivery holds Secrets, and an admission policy's message may quote one in a form that cannot be recognised]";
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/**
 * `text` with each character lower-cased where that keeps its length, so that positions in it
 * are positions in `text`: quotes are matched regardless of case (an admission message may
 * upper-case what it echoes; hex may be written in either case).
 */
function foldCase(text: string): string {
  let folded = '';
  for (const char of text) {
    const lower = char.toLowerCase();
    folded += lower.length === char.length ? lower : char;
  }
  return folded;
}

/**
 * The forms a value may be echoed in: as is, JSON/Go-escaped, hex, percent-encoded, its base64 and base64url (from each
 * of the three byte alignments, so that the base64 of any part of it is a part of one of them), a
 * base64 value decoded, line by line.
 */
function formsOf(value: string): string[] {
  const texts = [value];
  const forms: string[] = [];
  if (value.length % 4 === 0 && BASE64.test(value)) {
    const bytes = Buffer.from(value, 'base64');
    const decoded = bytes.toString('utf8');
    if (!decoded.includes('\uFFFD')) texts.push(decoded);
    // Binary data has no text form, but a policy can still print its bytes in hex.
    else forms.push(bytes.toString('hex'));
  }
  for (const text of texts) {
    const escaped = JSON.stringify(text).slice(1, -1);
    forms.push(text, escaped, ...text.split(/\r?\n/), ...escaped.split('\\n'));
    const bytes = Buffer.from(text);
    forms.push(bytes.toString('base64'), bytes.toString('base64url'), bytes.toString('hex'));
    if (encodeURIComponent(text) !== text) forms.push(encodeURIComponent(text));
    for (let offset = 0; offset < Math.min(3, bytes.length); offset++) {
      const aligned = bytes.subarray(offset);
      // The last group of an encoding depends on where the quoted part ends: left out. Parts of
      // an encoding are only matched by fragment (a short one would match by chance).
      for (const encoded of [aligned.toString('base64'), aligned.toString('base64url')]) {
        const part = withoutLastGroup(encoded);
        if (part.length >= FRAGMENT_LENGTH) forms.push(part);
      }
    }
  }
  return forms.filter((form) => form.trim().length >= MIN_TAINTED_LENGTH);
}

const withoutLastGroup = (encoded: string) =>
  encoded.length > 4 ? encoded.slice(0, encoded.length - 4) : encoded;

/** The secret values of one run, and `scrub` for whatever the run writes out. */
export class Taint {
  /** Every FRAGMENT_LENGTH-character part of every form of a value. */
  private readonly fragments = new Set<string>();
  /** Forms shorter than FRAGMENT_LENGTH, matched whole. */
  private readonly shortForms = new Set<string>();
  private values = 0;
  /** Why messages are withheld whole, once the taint cannot check them. */
  private withheld: string | undefined;
  private learner: (() => Promise<void>) | undefined;
  private learning: Promise<void> | undefined;

  /** Taints a secret value (a string, number or boolean leaf). */
  add(value: unknown): void {
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') return;
    const forms = formsOf(String(value));
    if (forms.length > 0) this.values++;
    for (const form of forms.map(foldCase)) {
      if (form.length < FRAGMENT_LENGTH) {
        this.shortForms.add(form);
        continue;
      }
      for (let index = 0; index + FRAGMENT_LENGTH <= form.length; index++)
        this.fragments.add(form.slice(index, index + FRAGMENT_LENGTH));
    }
    if (this.fragments.size > MAX_TAINTED_FRAGMENTS)
      this.withhold(
        `the delivery's Secrets hold more than ${MAX_TAINTED_FRAGMENTS} characters to check it against`,
      );
  }

  /** Taints every value of a Secret (`data`, base64, and `stringData`); other objects are left alone. */
  addSecret(object: { readonly kind?: string; readonly apiVersion?: string } | undefined): void {
    if (!object || object.kind !== 'Secret' || object.apiVersion !== 'v1') return;
    const { data, stringData } = object as { data?: unknown; stringData?: unknown };
    for (const values of [data, stringData])
      if (values !== null && typeof values === 'object')
        for (const value of Object.values(values as Record<string, unknown>)) this.add(value);
    // (A data value is base64: add() taints it decoded as well.)
  }

  /**
   * From now on every message is withheld whole, saying `why` (the run could not learn what it
   * must scrub): deny what it cannot check.
   */
  withhold(why: string): void {
    this.withheld ??= why;
  }

  /**
   * `learn` taints the values this run did not see itself (the Secrets the delivery owns in the
   * cluster); it is run once, by `learned()`, when a message that may quote the API server is about
   * to be written. A learner that fails withholds every message.
   */
  learnWith(learn: () => Promise<void>): void {
    this.learner = learn;
  }

  /** Runs the learner once (later calls wait for the same run). */
  learned(): Promise<void> {
    const learner = this.learner;
    if (!learner) return Promise.resolve();
    this.learning ??= learner().catch((error: unknown) =>
      this.withhold(`the values of the delivery's Secrets could not be read to check it: ${describe(error)}`),
    );
    return this.learning;
  }

  /** How many values are tainted. */
  get size(): number {
    return this.values;
  }

  /**
   * `text` with every quote of a tainted value (whole or any FRAGMENT_LENGTH of it) replaced by
   * `[redacted]`, and what an admission policy's messageExpression says withheld.
   */
  scrub(text: string): string {
    if (this.withheld !== undefined && text.length > 0)
      return `[message withheld: it may quote a Secret's value, and ${this.withheld}]`;
    if (this.values === 0 || text.length === 0) return text;
    const denial = POLICY_DENIAL.exec(text);
    if (denial)
      return `${this.scrubQuotes(text.slice(0, denial.index + denial[0].length))}${POLICY_MESSAGE_WITHHELD}`;
    return this.scrubQuotes(text);
  }

  private scrubQuotes(text: string): string {
    const folded = foldCase(text);
    const quoted = new Uint8Array(text.length);
    for (let index = 0; index + FRAGMENT_LENGTH <= folded.length; index++)
      if (this.fragments.has(folded.slice(index, index + FRAGMENT_LENGTH)))
        quoted.fill(1, index, index + FRAGMENT_LENGTH);
    for (const form of this.shortForms)
      for (let index = folded.indexOf(form); index >= 0; index = folded.indexOf(form, index + 1))
        quoted.fill(1, index, index + form.length);
    if (!quoted.includes(1)) return text;
    let result = '';
    for (let index = 0; index < text.length; index++) {
      if (!quoted[index]) result += text[index];
      else if (index === 0 || !quoted[index - 1]) result += REDACTED;
    }
    return result;
  }

  /** Every string in `value` (objects and arrays walked) scrubbed. */
  scrubValue<T>(value: T): T {
    if (this.values === 0 && this.withheld === undefined) return value;
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

// The learner's error is about reading Secrets (a status code, a name), never their values.
const describe = (error: unknown) => (error instanceof Error ? error.message : String(error)).slice(0, 300);
