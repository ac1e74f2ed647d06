// What a gate request may say about itself in the audit trail, and how stored text is printed.

/** The longest `reason` a request may carry, in characters (a change ticket and a sentence or two). */
export const MAX_REASON_LENGTH = 1_000;
/** The longest name a caller may claim in `requestedBy`, in characters. */
export const MAX_REQUESTED_BY_LENGTH = 200;

/**
 * Principals only sluice writes: a schedule's firing (`schedule/<gate>/<index>`), sluice itself,
 * and a request that named no one (`unknown (<source>)`). A caller may not claim them.
 */
export const RESERVED_PRINCIPAL_PREFIXES: readonly string[] = ['schedule/', 'sluice/', 'unknown ('];

/**
 * Characters that can change how a line reads on a terminal or in a log: controls (C0 such as
 * newline and ESC, DEL, C1), the Unicode line and paragraph separators, and every format
 * character (category Cf: bidirectional overrides and isolates, which reorder what follows
 * them, and invisible ones such as zero-width spaces and joiners, which make two names that
 * differ look alike), and the other characters that print as nothing (Unicode's
 * Default_Ignorable_Code_Point: Hangul fillers, variation selectors, the combining grapheme
 * joiner) or as a blank (the braille blank).
 */
const CONTROL = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}\u2800]/gu;

const NAMED: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

const escapeOne = (char: string): string => {
  const code = char.codePointAt(0)!;
  return (
    NAMED[char] ?? (code > 0xffff ? `\\u{${code.toString(16)}}` : `\\u${code.toString(16).padStart(4, '0')}`)
  );
};

/** `text` with every control character written out (`\n`, `\u001b`), so it prints as one inert line. */
export function printable(text: string): string {
  return text.replace(CONTROL, escapeOne);
}

/**
 * JSON text with the control characters JSON.stringify leaves as they are (DEL, C1, the Unicode
 * separators, bidi controls) written out as `\uXXXX`: the same JSON, inert on a terminal. Its
 * own line breaks (pretty-printing) stay; inside strings JSON.stringify already escaped them.
 */
export function printableJson(json: string): string {
  return json.replace(CONTROL, (char) => (char === '\n' ? char : escapeOne(char)));
}

/** The first control character in `text`, written out, or undefined when there is none. */
export function controlCharacterIn(text: string): string | undefined {
  const found = text.match(new RegExp(CONTROL.source, 'u'));
  return found ? escapeOne(found[0]) : undefined;
}

/**
 * Characters a claimed name may not contain: the CLI and status print a claim as
 * `<name> (unverified)`, so a name with parentheses could print as a different marker.
 */
export const CLAIM_MARKERS = /[()\uFF08\uFF09\uFE59\uFE5A\u207D\u207E\u208D\u208E]/;

/**
 * Blanks a claimed name may not have: any but a plain space, a leading or trailing one, or two
 * in a row (a run of spaces pushes the "(unverified)" mark out of sight).
 */
export const NAME_BLANKS = /[^\S ]|^ | $| {2}/;

/** The reserved prefix `principal` claims, if any (compared without case or leading spaces). */
export function reservedPrefixOf(principal: string): string | undefined {
  const claimed = principal.trimStart().toLowerCase();
  return RESERVED_PRINCIPAL_PREFIXES.find((prefix) => claimed.startsWith(prefix));
}

/** Length in characters (code points), as people count them. */
export const characters = (text: string): number => [...text].length;
