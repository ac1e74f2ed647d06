// The rules of a delivery's rollback on plain values: what a gate's `holds` accepts and means,
// which gates hold a rollback, which revision a rollback returns to, and what a run does while
// one is asked for.
import { describe, expect, it } from 'vitest';
import { gateHolds, heldActionsProblem } from '../../../functions/core/config/held-actions.ts';
import { ConfigError, parseGate } from '../../../functions/core/config/index.ts';
import {
  chooseRollbackTarget,
  rollbackForRun,
  rollbackHolders,
  rollbackPasses,
} from '../../../functions/core/rollback/rules.ts';
import type { AppliedRevision, RollbackRequest } from '../../../functions/core/model/rollback.ts';
import type { BlockingGate } from '../../../functions/core/model/status.ts';

const digest = (c: string) => `sha256:${c.repeat(64)}`;
const A = `1.0.0@${digest('a')}`;
const B = `1.1.0@${digest('b')}`;
const C = `1.2.0@${digest('c')}`;
const URL = 'oci://registry.example/app';
const applied = (revision: string, replacedAt?: string, url = URL): AppliedRevision => ({
  digest: revision.slice(revision.indexOf('sha256:')),
  revision,
  url,
  ...(replacedAt && { replacedAt }),
});

describe("a gate's holds", () => {
  it('defaults to new revisions only: a rollback passes', () => {
    const gate = parseGate({ name: 'friday', default: 'open' });
    expect(gate.holds).toBeUndefined();
    expect(gateHolds(gate, 'revisions')).toBe(true);
    expect(gateHolds(gate, 'rollback')).toBe(false);
  });

  it('holds rollback too when it lists it, and is stored only then', () => {
    const gate = parseGate({ name: 'sre', default: 'closed', holds: ['revisions', 'rollback'] });
    expect(gate.holds).toEqual(['revisions', 'rollback']);
    expect(gateHolds(gate, 'rollback')).toBe(true);
    expect(parseGate({ name: 'friday', default: 'open', holds: ['revisions'] }).holds).toBeUndefined();
  });

  it.each([
    [['rollback'], 'must list "revisions": a closed gate always holds new revisions'],
    [['revisions', 'revisions'], 'lists "revisions" more than once'],
    [['revisions', 'drift'], 'holds'],
    [[], 'must list "revisions"'],
  ])('refuses holds: %j, naming the field', (holds, message) => {
    let error: unknown;
    try {
      parseGate({ name: 'g', default: 'open', holds });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect(String((error as Error).message)).toContain('holds');
    expect(String((error as Error).message)).toContain(message);
  });

  it('heldActionsProblem accepts exactly the lists that name revisions once', () => {
    expect(heldActionsProblem(['revisions'])).toBeUndefined();
    expect(heldActionsProblem(['rollback', 'revisions'])).toBeUndefined();
    expect(heldActionsProblem(['rollback'])).toMatch(/must list "revisions"/);
  });
});

describe('which gates hold a rollback', () => {
  const gate = (name: string, blocks: 'all' | 'revisions', holdsRollback?: boolean): BlockingGate => ({
    name,
    blocks,
    ...(holdsRollback && { holdsRollback }),
  });

  it('only the closed gates that hold rollback, whatever they block; the others are passed', () => {
    const verdict = {
      blockAll: [gate('alarm', 'all'), gate('sre', 'all', true)],
      blockRevisions: [gate('friday', 'revisions'), gate('cab', 'revisions', true)],
    };
    expect(rollbackHolders(verdict).map((g) => g.name)).toEqual(['sre', 'cab']);
    expect(rollbackPasses(verdict)).toEqual(['alarm', 'friday']);
    expect(rollbackHolders({ blockAll: [], blockRevisions: [] })).toEqual([]);
  });
});

describe('the revision a rollback returns to', () => {
  const history = [
    applied(A, '2026-05-01T00:00:00Z'),
    applied(B, '2026-05-08T00:00:00Z'),
    applied(C), // running
  ];
  const choose = (extra: Partial<Parameters<typeof chooseRollbackTarget>[0]> = {}) =>
    chooseRollbackTarget({ delivery: 'checkout', url: URL, current: C, history, ...extra });

  it('without --to: the one applied before the current (the latest replaced)', () => {
    expect(choose().revision).toBe(B);
  });

  it('with --to: the one named by digest, with or without its tag', () => {
    expect(choose({ requested: digest('a') }).revision).toBe(A);
    expect(choose({ requested: `whatever@${digest('a')}` }).revision).toBe(A);
  });

  it('refuses a digest never applied, naming the delivery, the digest and what it applied', () => {
    expect(() => choose({ requested: digest('d') })).toThrow(
      `delivery 'checkout' has never applied ${digest('d')}: a rollback returns only to a revision it applied before (it applied ${B}, ${A})`,
    );
  });

  it('refuses a digest applied from another source URL (the delivery moved repositories)', () => {
    const moved = [applied(A, '2026-05-01T00:00:00Z', 'oci://registry.example/old'), applied(C)];
    expect(() => choose({ history: moved, requested: digest('a') })).toThrow(/has never applied/);
    expect(() => choose({ history: moved })).toThrow(/has applied no revision before/);
  });

  it('refuses a tag, the current revision, and a delivery with nothing before', () => {
    expect(() => choose({ requested: '1.0.0' })).toThrow(/names no digest.*never looks a tag up/);
    expect(() => choose({ requested: digest('c') })).toThrow(/runs .* already/);
    expect(() => choose({ history: [applied(C)] })).toThrow(
      `delivery 'checkout' has applied no revision before ${C}: there is nothing to roll back to`,
    );
  });

  it('skips the revision the rollback in force rolled back from', () => {
    const rolled = [applied(A), applied(B, '2026-05-08T00:00:00Z'), applied(C, '2026-05-09T00:00:00Z')];
    expect(
      chooseRollbackTarget({ delivery: 'd', url: URL, current: A, history: rolled, rolledBackFrom: C })
        .revision,
    ).toBe(B);
  });
});

describe('what a run does while a rollback is asked for', () => {
  const request: RollbackRequest = {
    id: 'r1',
    from: C,
    to: A,
    held: `1.3.0@${digest('e')}`,
    by: 'arn:aws:iam::123456789012:user/alice',
    reason: 'INC-1',
    at: '2026-05-10T00:00:00Z',
    source: 'url',
    through: [],
  };
  const decide = (options: Partial<Parameters<typeof rollbackForRun>[0]>) =>
    rollbackForRun({ request, settled: undefined, lastApplied: C, resolvedDigest: digest('c'), ...options });

  it('applies it while unsettled and the delivery still runs the revision it rolls back from', () => {
    expect(decide({})).toEqual({ kind: 'apply', request });
    expect(decide({ resolvedDigest: undefined })).toEqual({ kind: 'apply', request });
    expect(decide({ resolvedDigest: digest('e') })).toEqual({ kind: 'apply', request });
    expect(decide({ resolvedDigest: digest('a') })).toEqual({ kind: 'apply', request });
  });

  it('names a revision pushed since, which goes instead if the gates let it through', () => {
    expect(decide({ resolvedDigest: digest('f') })).toEqual({ kind: 'apply', request, newer: digest('f') });
  });

  it('settles one the delivery left some other way', () => {
    expect(decide({ lastApplied: `1.4.0@${digest('f')}` })).toEqual({ kind: 'none', settle: request });
  });

  it('once settled, keeps the rollback revision while the source still resolves to the one it left', () => {
    expect(decide({ settled: 'r1', lastApplied: A })).toEqual({ kind: 'keep', request });
    expect(decide({ settled: 'r1', lastApplied: A, resolvedDigest: digest('f') })).toEqual({ kind: 'none' });
    expect(decide({ settled: 'r1', lastApplied: `1.4.0@${digest('f')}` })).toEqual({ kind: 'none' });
  });

  it('does nothing without a request or an applied revision', () => {
    expect(decide({ request: undefined })).toEqual({ kind: 'none' });
    expect(decide({ lastApplied: undefined })).toEqual({ kind: 'none' });
  });
});
