// What a notice of a held release says, per cause: only what an approval lifts is sent as
// "approve"; a freeze or calendar event says until when; an alarm names itself; each cause has a
// key, so a freeze is told once per window whatever revisions it holds. Plain values.
import { describe, expect, it } from 'vitest';
import { holdNotice } from '../../../functions/core/gates/notice.ts';
import type { BlockingGate } from '../../../functions/core/model/status.ts';

const D1 = `sha256:${'1'.repeat(64)}`;
const D2 = `sha256:${'2'.repeat(64)}`;
const v1 = `1.0.0@${D1}`;
const v2 = `2.0.0@${D2}`;

const freeze: BlockingGate = {
  name: 'holiday',
  blocks: 'revisions',
  closedBy: 'freeze "year end" (2026-12-24 to 2027-01-02, Europe/Berlin)',
  closedByCause: 'freeze',
  opensAt: '2027-01-01T23:00:00.000Z',
};
const alarm: BlockingGate = {
  name: 'shop-healthy',
  blocks: 'all',
  closedByAlarms: [{ alarm: 'shop-5xx', state: 'ALARM', why: 'in ALARM since 2026-06-01T09:00:00Z' }],
};
const approval: BlockingGate = { name: 'release-approval', blocks: 'all', approvesRevisions: true };

describe('holdNotice', () => {
  it('a freeze: wait until it ends, no approval offered; the key names the window, not the revision', () => {
    const notice = holdNotice({ delivery: 'shop', gate: freeze, revision: v1, runbook: 'sluice-holiday' });
    expect(notice).toMatchObject({ cause: 'freeze', lift: 'wait', until: '2027-01-01T23:00:00.000Z' });
    expect(notice.approve).toBeUndefined();
    expect(notice.text).toBe(
      `sluice: delivery 'shop' (revision ${D1} (tag 1.0.0)) waits at gate 'holiday': gate 'holiday' is closed by freeze "year end" (2026-12-24 to 2027-01-02, Europe/Berlin) until 2027-01-01T23:00:00Z. No approval opens it: it goes out by itself when the freeze ends at 2027-01-01T23:00:00Z; only a break-glass override (sluice gate override) lets a revision through sooner.`,
    );
    expect(notice.text).not.toMatch(/\bapprove\b|sluice gate open/i);
    expect(holdNotice({ delivery: 'shop', gate: freeze, revision: v2 }).key).toBe(notice.key);
    expect(
      holdNotice({ delivery: 'shop', gate: { ...freeze, opensAt: '2027-02-01T00:00:00Z' } }).key,
    ).not.toBe(notice.key);
  });

  it('a calendar event or Change Calendar without a known end says so', () => {
    const calendar = holdNotice({
      delivery: 'shop',
      gate: {
        name: 'cal',
        blocks: 'all',
        closedBy: 'Change Calendar "prod" is CLOSED',
        closedByCause: 'change-calendar',
      },
    });
    expect(calendar).toMatchObject({ cause: 'change-calendar', lift: 'wait' });
    expect(calendar.until).toBeUndefined();
    expect(calendar.todo).toContain('when the Change Calendar opens (no end known)');
  });

  it('an alarm: fix the alarm it names, no approval offered, whatever revision', () => {
    const notice = holdNotice({ delivery: 'shop', gate: alarm, revision: v1, runbook: 'sluice-shop' });
    expect(notice).toMatchObject({ cause: 'alarm', lift: 'fix-alarm' });
    expect(notice.approve).toBeUndefined();
    expect(notice.text).toContain(
      "gate 'shop-healthy' is closed by alarm 'shop-5xx' in ALARM since 2026-06-01T09:00:00Z",
    );
    expect(notice.todo).toBe(
      "No approval opens it: fix what alarm 'shop-5xx' reports; the gate opens by itself when it is OK (only a break-glass override (sluice gate override) lets a revision through sooner).",
    );
    expect(notice.text).not.toMatch(/\bapprove\b|sluice gate open/i);
    expect(holdNotice({ delivery: 'shop', gate: alarm, revision: v2 }).key).toBe(notice.key);
  });

  it('an approval gate: approve this revision, with the runbook and the CLI line; one key per revision', () => {
    const notice = holdNotice({ delivery: 'shop', gate: approval, revision: v1, runbook: 'sluice-release' });
    expect(notice).toMatchObject({
      cause: 'approval',
      lift: 'approve',
      approve: {
        runbook: 'sluice-release',
        cli: `sluice gate open release-approval --revision ${v1} --function <gate function>`,
      },
    });
    expect(notice.todo).toBe(
      `Approve this revision in the console (Systems Manager, Automation, runbook sluice-release) or with: sluice gate open release-approval --revision ${v1} --reason <why>`,
    );
    expect(holdNotice({ delivery: 'shop', gate: approval, revision: v2 }).key).not.toBe(notice.key);
    const known = holdNotice({ delivery: 'shop', gate: approval, revision: v1, gateFunction: 'Sluice-Gate' });
    expect(known.text.endsWith(`--reason <why> --function Sluice-Gate`)).toBe(true);
  });

  it('a gate a window or schedule opens: it opens by itself, approve to let it through sooner', () => {
    const notice = holdNotice({
      delivery: 'shop',
      gate: { name: 'ndf', blocks: 'all', opensAt: '2026-06-06T00:00:00.000Z' },
      revision: v1,
    });
    expect(notice).toMatchObject({ lift: 'approve', until: '2026-06-06T00:00:00.000Z' });
    expect(notice.todo).toMatch(
      /^It opens by itself at 2026-06-06T00:00:00Z; to let it through sooner, approve this revision with: /,
    );
  });

  it('a gate open for other deliveries: approve it for this one (--delivery)', () => {
    const notice = holdNotice({
      delivery: 'shop',
      gate: { name: 'g', blocks: 'all', openFor: { deliveries: ['cart'], approvedBy: 'alice' } },
      revision: v1,
    });
    expect(notice.approve?.cli).toBe(
      `sluice gate open g --revision ${v1} --delivery shop --function <gate function>`,
    );
    expect(notice.why).toBe("gate 'g' is open only for deliveries cart (approved by alice)");
  });

  it('a gate that cannot be evaluated: fix the gate, nothing to approve', () => {
    const notice = holdNotice({
      delivery: 'shop',
      gate: { name: 'g', blocks: 'all', problem: 'not registered' },
    });
    expect(notice).toMatchObject({ cause: 'problem', lift: 'fix-gate' });
    expect(notice.approve).toBeUndefined();
    expect(notice.text).toBe(
      "sluice: delivery 'shop' waits at gate 'g': gate 'g' is closed: not registered. No approval opens it: fix the gate (sluice gates g says why).",
    );
  });

  it('a wave gate names the rollout, the wave and the members it holds', () => {
    const notice = holdNotice({
      delivery: 'eu-west',
      gate: approval,
      revision: v1,
      wave: { rollout: 'shop', wave: 2, deliveries: ['eu-west', 'eu-central'] },
    });
    expect(notice.text).toMatch(
      new RegExp(
        `^sluice: rollout 'shop' wave 2 \\(eu-west, eu-central\\) \\(revision ${D1} \\(tag 1\\.0\\.0\\)\\) waits at gate 'release-approval': gate 'release-approval' is closed\\. Approve this revision with: `,
      ),
    );
  });
});
