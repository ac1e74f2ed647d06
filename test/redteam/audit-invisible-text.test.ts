// Red team: the audit trail refuses control and format (Cf) characters so that two names that
// differ cannot look alike and "(unverified)" cannot be hidden. Invisible characters of other
// categories pass: Hangul fillers (Lo), the braille blank (So), the combining grapheme joiner and
// variation selectors (Mn), and runs of spaces that push "(unverified)" off the screen.
import { describe, expect, it } from 'vitest';
import { readablePrincipal } from '../../functions/core/access/caller.ts';
import { parseGateEvent } from '../../functions/core/gates/event.ts';

const claim = (requestedBy: string) => () =>
  parseGateEvent({ gate: 'release', action: 'open', requestedBy, reason: 'CHG-1' });

describe('claimed names that print like another name', () => {
  it.each([
    ['a Hangul filler (U+3164)', 'alice\u3164'],
    ['a halfwidth Hangul filler (U+FFA0)', 'alice\uffa0'],
    ['a braille blank (U+2800)', 'alice\u2800'],
    ['a combining grapheme joiner (U+034F)', 'ali\u034fce'],
    ['a variation selector (U+FE0F)', 'alice\ufe0f'],
  ])('%s is refused in requestedBy', (_what, name) => {
    expect(claim(name)).toThrow(/requestedBy/);
  });

  it('"(unverified)" stays next to the claimed name (no run of blanks pushes it off the line)', () => {
    // "bob （role Approver, 123456789012）" in fullwidth parentheses, then 150 spaces.
    const name = `bob \uff08role Approver, 123456789012\uff09${' '.repeat(150)}`;
    let printed: string;
    try {
      printed = readablePrincipal(
        parseGateEvent({ gate: 'g', action: 'close', requestedBy: name }).requestedBy!,
        false,
      );
    } catch {
      return; // refused: secure
    }
    expect(printed.indexOf('(unverified)')).toBeLessThan(80);
  });
});
