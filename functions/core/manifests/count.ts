import { SluiceError } from '../errors.ts';

/** A `---` or `...` line: where a YAML document starts or ends. */
const MARKER = /(?:^|\n)(?:---|\.\.\.)(?=\s|$)/g;
/** A line that holds something: not blank, not a comment, not a directive (`%YAML` at column 0). */
const CONTENT_LINE = /^(?:[ \t]*[^\s#%]|[ \t]+%)/gm;
/** What follows `---` on its own line holds something (`--- value`), not only a comment. */
const INLINE_CONTENT = /^[ \t]*[^\s#]/;

/**
 * The YAML documents in `text` that hold something, counted from the `---` and `...` lines alone,
 * without parsing: never fewer than the parser finds (a document holding only `null` is counted,
 * an empty one is not, as the build drops it). Linear and cheap, so a build can be refused before
 * any of it is parsed. `List` kinds are expanded only by parsing; they are counted then.
 */
export function countDocuments(text: string): number {
  let documents = 0;
  let linesFrom = 0;
  let inline = '';
  const close = (end: number) => {
    if (INLINE_CONTENT.test(inline)) {
      documents++;
      return;
    }
    CONTENT_LINE.lastIndex = linesFrom;
    const content = CONTENT_LINE.exec(text);
    if (content !== null && content.index < end) documents++;
  };
  MARKER.lastIndex = 0;
  for (let marker = MARKER.exec(text); marker !== null; marker = MARKER.exec(text)) {
    const at = marker.index + (text[marker.index] === '\n' ? 1 : 0);
    close(at);
    const newline = text.indexOf('\n', at);
    const lineEnd = newline === -1 ? text.length : newline;
    inline = text[at] === '-' ? text.slice(at + 3, lineEnd) : '';
    linesFrom = Math.min(lineEnd + 1, text.length);
    MARKER.lastIndex = lineEnd;
  }
  close(text.length);
  return documents;
}

/**
 * Counts the build's objects as they are parsed and stops the build at the first one past
 * `max` (the limit maxObjects), naming where it was.
 */
export class ObjectCounter {
  private count = 0;
  constructor(readonly max: number) {}

  add(origin: string): void {
    if (++this.count > this.max) {
      throw new SluiceError(
        'BuildFailed',
        `${origin}: object ${this.count} of the build is more than the limit maxObjects (${this.max} objects); parsing stopped here`,
      );
    }
  }
}

/** `12000 in deploy/a.yaml, 40 in deploy/b.yaml and 3 more files`: where most of a count is. */
export function largestParts(
  parts: readonly (readonly [string, number])[],
  format: (n: number) => string,
): string {
  const sorted = [...parts].sort((a, b) => b[1] - a[1]);
  const shown = sorted.slice(0, 3).map(([name, n]) => `${format(n)} in ${name}`);
  const rest = sorted.length - shown.length;
  return `${shown.join(', ')}${rest > 0 ? ` and ${rest} more file${rest === 1 ? '' : 's'}` : ''}`;
}
