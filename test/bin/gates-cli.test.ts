// `sluice gates` and `sluice gate open|close|history` as a user runs them, on the real components.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tableFromEnvironment } from '../../functions/core/environment.ts';
import { auditRefusal, recordGateRequest, type GateRequest } from '../../functions/core/store/gates.ts';
import { createAlarm, setAlarmState } from '../support/alarms.ts';
import { pushFiles } from '../support/deliveries.ts';
import { sluice } from '../support/cli.ts';
import { createNamespace, testbed, uniqueName } from '../support/testbed.ts';

const bed = testbed();

describe('sluice gates', () => {
  it('shows the next scheduled close of No-Deploy-Friday in Berlin, across the DST change', async () => {
    const friday = uniqueName('ndf');
    const dir = mkdtempSync(join(tmpdir(), 'sluice-gates-'));
    writeFileSync(
      join(dir, 'sluice.yaml'),
      `gates:\n  - name: ${friday}\n    default: open\n    window: 24h\n    schedules:\n      - { cron: "0 0 ? * FRI *", timeZone: Europe/Berlin, action: close }\n`,
    );
    expect((await sluice('register', '-f', join(dir, 'sluice.yaml'))).stdout).toContain(
      `gate ${friday} registered`,
    );

    const winter = JSON.parse(
      (await sluice('gates', friday, '--at', '2026-03-26T12:00:00Z', '--json')).stdout,
    );
    expect(winter).toMatchObject({
      name: friday,
      state: 'open',
      cause: 'default',
      status: { name: friday, state: 'open', default: 'open' },
      nextChange: { at: '2026-03-26T23:00:00.000Z', state: 'closed', cause: 'schedule' },
    });
    const summer = JSON.parse(
      (await sluice('gates', friday, '--at', '2026-03-28T12:00:00Z', '--json')).stdout,
    );
    expect(summer.nextChange).toMatchObject({ at: '2026-04-02T22:00:00.000Z', state: 'closed' });

    const table = await sluice('gates', friday, '--at', '2026-03-28T12:00:00Z');
    expect(table.stdout.split('\n')[0]).toMatch(
      /^GATE\s+STATE\s+DEFAULT\s+SINCE\s+UNTIL\s+NEXT CHANGE\s+LAST REQUEST$/,
    );
    expect(table.stdout).toMatch(
      new RegExp(
        // Friday's close is computed from the cron: no schedule invocation was ever recorded.
        `${friday}\\s+open\\s+open\\s+13h ago\\s+-\\s+closes in 5d \\(2026-04-02T22:00:00Z, schedule\\)\\s+close by schedule/${friday}/0 1d ago`,
      ),
    );
  });

  it('holds a delivery, then opens the gate and reconciles it at once; history records who and why', async () => {
    const gate = uniqueName('sre');
    const name = uniqueName('held');
    const ns = uniqueName('held');
    const repository = uniqueName('cli/gated');
    await createNamespace(bed.kubeConfig(), ns);
    await pushFiles(bed, repository, 'v1', {
      'cm.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: held\n  namespace: ${ns}\ndata:\n  k: v\n`,
    });
    const dir = mkdtempSync(join(tmpdir(), 'sluice-gates-'));
    writeFileSync(
      join(dir, 'sluice.yaml'),
      [
        'gates:',
        `  - { name: ${gate}, default: closed, window: 1h }`,
        'deliveries:',
        `  - name: ${name}`,
        `    source: { url: "oci://${bed.registry.host}/${repository}", tag: v1, provider: aws }`,
        '    prune: true',
        `    cluster: { kubeconfig: ${bed.kube.kubeconfig} }`,
        `    gates: [{ name: ${gate}, blocks: all }]`,
        '',
      ].join('\n'),
    );
    await sluice('register', '-f', join(dir, 'sluice.yaml'));

    const held = await sluice('reconcile', name);
    expect(held.code).toBe(4);
    expect(held.stdout).toContain(
      `${name}: Blocked: waiting for gate '${gate}' (closed; no opening scheduled`,
    );
    const status = await sluice('status', name);
    expect(status.stdout).toMatch(
      new RegExp(`${name}\\s+False\\s+GateClosed\\s+-\\s+\\S+ ago\\s+waiting for gate '${gate}'`),
    );

    const opened = await sluice('gate', 'open', gate, '--for', '30m', '--reason', 'CHG-42');
    expect(opened.code).toBe(0);
    expect(opened.stdout).toMatch(
      new RegExp(
        `gate '${gate}' is open until \\S+ \\(open by ${userInfo().username} \\(unverified\\): CHG-42\\); reconciling ${name}`,
      ),
    );
    expect(opened.stderr).toMatch(new RegExp(`${name}: Succeeded: Applied revision: v1@sha256:`));
    // The local components' table: no warning about an unverified claim (a table in AWS gets one).
    expect(opened.stderr).not.toContain('warning');

    const closed = await sluice('gate', 'close', gate, '--reason', 'done', '--by', 'carol', '--json');
    expect(JSON.parse(closed.stdout)).toMatchObject({ outcome: 'accepted', status: { state: 'closed' } });

    // An approval pinned to the applied digest under a tag the requester made up: shown digest
    // first, the tag marked as claimed (it was never checked against the registry).
    const digest = /Applied revision: v1@(sha256:[a-f0-9]{64})/.exec(opened.stderr)![1]!;
    const pinned = await sluice(
      'gate',
      'open',
      gate,
      '--revision',
      `release-9@${digest}`,
      '--reason',
      'CHG-43',
    );
    expect(pinned.code).toBe(0);
    const claimedText = `${digest} (tag "release-9" claimed, not checked against the registry)`;
    expect(pinned.stdout).toContain(`gate '${gate}' is open for ${claimedText} only until`);
    const table = await sluice('gates', gate);
    expect(table.stdout).toContain(`open for ${claimedText} by ${userInfo().username} (unverified)`);

    const history = await sluice('gate', 'history', gate);
    const lines = history.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^REQUESTED AT\s+ACTION\s+REVISION\s+WINDOW\s+BY\s+SOURCE\s+OUTCOME\s+REASON$/);
    expect(lines[1]).toMatch(/^\S+\s+open\s+sha256:/);
    expect(lines[1]).toContain(claimedText);
    expect(lines[2]).toMatch(/\s+close\s+-\s+1h\s+carol \(unverified\)\s+cli\s+accepted\s+done$/);
    // A request without a revision says so in words.
    expect(lines[3]).toMatch(
      new RegExp(
        `\\s+open\\s+any revision\\s+30m\\s+${userInfo().username} \\(unverified\\)\\s+cli\\s+accepted\\s+CHG-42$`,
      ),
    );
  });

  it('refuses an unknown gate and a malformed duration, naming them', async () => {
    const unknown = await sluice('gate', 'open', 'no-such-gate');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/gate 'no-such-gate' is not registered/);
    const gate = uniqueName('g');
    const dir = mkdtempSync(join(tmpdir(), 'sluice-gates-'));
    writeFileSync(join(dir, 'sluice.yaml'), `gates:\n  - { name: ${gate}, default: open }\n`);
    await sluice('register', '-f', join(dir, 'sluice.yaml'));
    const bad = await sluice('gate', 'close', gate, '--for', 'two hours');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/"window": "two hours" is not a duration/);
    expect(JSON.parse((await sluice('gate', 'history', gate, '--json')).stdout)).toEqual([]);
  });

  it('refuses a request that would spoof the audit trail: a schedule/ name, a newline, an escape sequence', async () => {
    const gate = uniqueName('spoof');
    const dir = mkdtempSync(join(tmpdir(), 'sluice-gates-'));
    writeFileSync(join(dir, 'sluice.yaml'), `gates:\n  - { name: ${gate}, default: open, window: 1h }\n`);
    await sluice('register', '-f', join(dir, 'sluice.yaml'));

    const asSchedule = await sluice('gate', 'close', gate, '--by', `schedule/${gate}/0`);
    expect(asSchedule.code).toBe(1);
    expect(asSchedule.stderr).toContain(
      `"requestedBy": "schedule/${gate}/0" starts with "schedule/", which is reserved for sluice's own requests`,
    );
    const forgedRow = await sluice('gate', 'close', gate, '--reason', `CHG-1\n${FORGED_ROW}`);
    expect(forgedRow.code).toBe(1);
    expect(forgedRow.stderr).toContain('"reason" contains the control character \\n');
    const hidden = await sluice('gate', 'close', gate, '--by', 'mallory\u001b[8m');
    expect(hidden.code).toBe(1);
    expect(hidden.stderr).toContain('"requestedBy" contains the control character \\u001b');
    expect(JSON.parse((await sluice('gate', 'history', gate, '--json')).stdout)).toEqual([]);
  });

  it('shows a refused console approval: OUTCOME refused and why, in the table and in --json', async () => {
    const gate = uniqueName('refused');
    const dir = mkdtempSync(join(tmpdir(), 'sluice-gates-'));
    writeFileSync(join(dir, 'sluice.yaml'), `gates:\n  - { name: ${gate}, default: closed, window: 1h }\n`);
    await sluice('register', '-f', join(dir, 'sluice.yaml'));
    // As the gate function audits a verified runbook approval it refuses (runbook-approval.test.ts).
    const mallory = 'arn:aws:iam::000000000000:user/mallory';
    const why = `gate '${gate}': the approval of Automation execution 0a1b refused: signed by ${mallory}: ${mallory} is not granted the entry open_${gate}`;
    const at = '2026-06-01T10:00:00.000Z';
    await auditRefusal(
      tableFromEnvironment(),
      gate,
      {
        action: 'open',
        requestedAt: at,
        requestedBy: mallory,
        reason: 'CHG-5 [runbook 0a1b]',
        source: 'runbook',
        verified: true,
      },
      why,
      new Date(at),
    );

    const lines = (await sluice('gate', 'history', gate)).stdout.trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatch(
      /\s+open\s+any revision\s+-\s+mallory \(user, 000000000000\)\s+runbook\s+refused\s+CHG-5 \[runbook 0a1b\] \(refused: /,
    );
    expect(lines[1]).toContain(`(refused: ${why})`);
    expect(JSON.parse((await sluice('gate', 'history', gate, '--json')).stdout)).toMatchObject([
      { action: 'open', outcome: 'refused', requestedBy: mallory, refusedBecause: why, source: 'runbook' },
    ]);
    // A refused approval is history only: the gate stays as it was.
    expect(JSON.parse((await sluice('gates', gate, '--json')).stdout)).toMatchObject({ state: 'closed' });
  });

  it('prints records stored before those rules as one inert line each, in sluice gates and history', async () => {
    const gate = uniqueName('stored');
    const dir = mkdtempSync(join(tmpdir(), 'sluice-gates-'));
    writeFileSync(join(dir, 'sluice.yaml'), `gates:\n  - { name: ${gate}, default: open }\n`);
    await sluice('register', '-f', join(dir, 'sluice.yaml'));
    const db = tableFromEnvironment();
    const stored = (at: string, fields: Partial<GateRequest>) =>
      recordGateRequest(
        db,
        gate,
        { action: 'close', requestedAt: at, requestedBy: 'x', reason: '', source: 'cli', ...fields },
        new Date(at),
      );
    await stored('2026-06-01T10:00:00.000Z', { requestedBy: `schedule/${gate}/0`, reason: 'freeze' });
    await stored('2026-06-01T10:01:00.000Z', { requestedBy: 'carol', reason: `CHG-1\n${FORGED_ROW}` });
    await stored('2026-06-01T10:02:00.000Z', { requestedBy: 'mallory\u001b[8m', reason: 'x\u009b8m' });

    const history = await sluice('gate', 'history', gate);
    for (const control of ['\u001b', '\u009b']) expect(history.stdout).not.toContain(control);
    const lines = history.stdout.trim().split('\n');
    expect(lines).toHaveLength(4);
    expect(lines[1]).toMatch(/\s+mallory\\u001b\[8m \(unverified\)\s+cli\s+accepted\s+x\\u009b8m$/);
    expect(lines[2]).toMatch(/\s+carol \(unverified\)\s+cli\s+accepted\s+CHG-1\\n2026-06-01T09:00:00Z/);
    expect(lines[3]).toMatch(
      new RegExp(`\\s+schedule/${gate}/0 \\(unverified\\)\\s+cli\\s+accepted\\s+freeze$`),
    );

    const table = await sluice('gates', gate);
    for (const control of ['\u001b', '\u009b']) expect(table.stdout).not.toContain(control);
    expect(table.stdout.trim().split('\n')).toHaveLength(2);
    expect(table.stdout).toContain('close by mallory\\u001b[8m (unverified)');
    const json = await sluice('gates', gate, '--json');
    for (const control of ['\u001b', '\u009b']) expect(json.stdout).not.toContain(control);
    expect(JSON.parse(json.stdout)).toMatchObject({
      status: { lastRequest: { requestedBy: 'mallory\u001b[8m', reason: 'x\u009b8m' } },
    });
  });
});

/** A fabricated `sluice gate history` row: a signed approval that never happened. */
const FORGED_ROW =
  '2026-06-01T09:00:00Z  open    -         1h      alice (role Approver, 123456789012)  url     accepted  CHG-2';

describe('sluice gates: alarm gates', () => {
  it('shows the alarm that holds the gate, whatever its requests say', async () => {
    const alarm = await createAlarm('ALARM');
    const gate = uniqueName('healthy');
    const dir = mkdtempSync(join(tmpdir(), 'sluice-gates-'));
    writeFileSync(
      join(dir, 'sluice.yaml'),
      `gates:\n  - name: ${gate}\n    default: open\n    alarms: [${alarm}]\n`,
    );
    expect((await sluice('register', '-f', join(dir, 'sluice.yaml'))).code).toBe(0);

    const table = await sluice('gates', gate);
    expect(table.stdout).toMatch(
      new RegExp(`${gate}\\s+closed \\(by alarm '${alarm}' in ALARM since \\S+Z\\)\\s+open`),
    );
    // --json says what the table says: closed, by the alarm (its requests alone would leave it open).
    expect(JSON.parse((await sluice('gates', gate, '--json')).stdout)).toMatchObject({
      name: gate,
      state: 'closed',
      cause: 'alarm',
      why: expect.stringContaining(`alarm '${alarm}' in ALARM since`),
      status: { state: 'open' },
      closedByAlarms: [{ alarm, state: 'ALARM' }],
    });

    await setAlarmState(alarm, 'OK');
    const cleared = JSON.parse((await sluice('gates', gate, '--json')).stdout);
    expect(cleared).toMatchObject({ state: 'open', cause: 'default' });
    expect(cleared.closedByAlarms).toBeUndefined();
    expect((await sluice('gates', gate)).stdout).toMatch(new RegExp(`${gate}\\s+open\\s+open`));
  });
});
