// How revisions are shown to people (pure): the digest first, a tag marked as checked or claimed,
// no revision in words; and the gate messages that show them use that one formatter.
import { describe, expect, it } from 'vitest';
import { describeGate, waitingMessage } from '../../../functions/core/gates/messages.ts';
import { describeOverride } from '../../../functions/core/gates/override.ts';
import { revisionText } from '../../../functions/core/model/revision-text.ts';

const DIGEST = `sha256:${'ab'.repeat(32)}`;
const OTHER = `sha256:${'cd'.repeat(32)}`;

describe('revisionText', () => {
  it.each([
    [`v1@${DIGEST}`, 'checked', `${DIGEST} (tag v1)`],
    [`v1@${DIGEST}`, 'claimed', `${DIGEST} (tag "v1" claimed, not checked against the registry)`],
    [DIGEST, 'claimed', DIGEST],
    [undefined, 'claimed', 'any revision'],
    ['', 'checked', 'any revision'],
    ['latest', 'claimed', '"latest" (claimed, not a digest)'],
  ] as const)('%s (%s) → %s', (revision, tag, text) => {
    expect(revisionText(revision, tag)).toBe(text);
  });
});

describe('gate messages show revisions with it', () => {
  const request = {
    action: 'open' as const,
    requestedAt: '2026-03-26T10:00:00.000Z',
    requestedBy: 'alice',
    verified: false,
    source: 'cli' as const,
  };

  it('a gate open for a pinned revision leads with its digest and marks the tag claimed', () => {
    const text = describeGate({
      name: 'sre',
      state: 'open',
      default: 'closed',
      byRequest: true,
      revision: `1.3.0@${DIGEST}`,
      until: '2026-03-26T11:00:00.000Z',
      lastRequest: { ...request, revision: `1.3.0@${DIGEST}` },
    } as never);
    expect(text).toContain(
      `is open for ${DIGEST} (tag "1.3.0" claimed, not checked against the registry) only`,
    );
    expect(text).not.toContain(`1.3.0@${DIGEST}`);
  });

  it('pending approvals without a revision say "any revision"; with one, its digest first', () => {
    const status = { name: 'sre', state: 'closed', default: 'closed' } as never;
    const pending = {
      approvals: [{ principal: 'arn:aws:sts::123456789012:assumed-role/Approver/alice' }],
      expiresAt: '2026-03-26T11:00:00.000Z',
    };
    expect(describeGate(status, undefined, pending as never, 2)).toContain(
      '1 of 2 approvals for any revision (by',
    );
    expect(describeGate(status, undefined, { ...pending, revision: `x@${DIGEST}` } as never, 2)).toContain(
      `1 of 2 approvals for ${DIGEST} (tag "x" claimed, not checked against the registry) (by`,
    );
  });

  it('a held revision (resolved by sluice) is shown checked; the approved one (requested) claimed', () => {
    const text = waitingMessage(
      [{ name: 'sre', blocks: 'all', openFor: { revision: `1.2.0@${OTHER}`, approvedBy: 'alice' } } as never],
      `1.3.0@${DIGEST}`,
    );
    expect(text).toBe(
      `${DIGEST} (tag 1.3.0) awaits approval at gate 'sre' (open only for ${OTHER} (tag "1.2.0" claimed, not checked against the registry), approved by alice); approve it with: sluice gate open sre --revision 1.3.0@${DIGEST}`,
    );
  });

  it('an override leads with its digest, the tag claimed', () => {
    expect(
      describeOverride({
        revision: `hotfix@${DIGEST}`,
        endsAt: '2026-06-01T10:00:00.000Z',
        madeBy: 'arn:aws:sts::123456789012:assumed-role/Oncall/bob',
        reason: 'INC-77',
      } as never),
    ).toMatch(
      new RegExp(
        `^${DIGEST} \\(tag "hotfix" claimed, not checked against the registry\\) until 2026-06-01T10:00:00Z by `,
      ),
    );
  });
});
