// What a break-glass runbook execution's record must show before it makes an override (pure: the
// record is a plain value here; the whole path runs against the SSM stand-in in
// test/functions/gate/break-glass-runbook.test.ts).
import { describe, expect, it } from 'vitest';
import type { AutomationRecord } from '../../../functions/core/approvals/runbook-approval.ts';
import {
  MAX_BREAK_GLASS_EXECUTION_AGE_MS,
  verifyRunbookOverride,
} from '../../../functions/core/break-glass/runbook-override.ts';

const ID = '0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0';
const RUNBOOK = 'sluice-break-glass-0123456789';
const NOW = new Date('2026-11-27T10:00:00Z');
const REVISION = `1.3.1@sha256:${'a'.repeat(64)}`;

const record = (changes: Partial<AutomationRecord> = {}, stepStart = NOW): AutomationRecord => ({
  executionId: ID,
  documentName: RUNBOOK,
  executedBy: 'arn:aws:sts::000000000000:assumed-role/Oncall/carol',
  startTime: stepStart,
  mode: 'Auto',
  parameters: {
    revision: [REVISION],
    window: ['1h'],
    reason: ['INC-77'],
    gates: ['freeze'],
    deliveries: [],
  },
  steps: [
    {
      name: 'override',
      action: 'aws:invokeLambdaFunction',
      status: 'InProgress',
      startTime: stepStart,
      outputs: {},
    },
  ],
  ...changes,
});
const verify = (found: AutomationRecord, breakGlassRunbook = RUNBOOK) =>
  verifyRunbookOverride(
    { ssmExecution: ID },
    {
      runbooks: new Map(),
      readAutomation: async () => found,
      ...(breakGlassRunbook && { breakGlassRunbook }),
    },
    NOW,
  );

describe('verifying a break-glass runbook execution', () => {
  it('reads the override and its author from the record', async () => {
    expect(await verify(record())).toEqual({
      executionId: ID,
      startedBy: 'arn:aws:sts::000000000000:assumed-role/Oncall/carol',
      event: { gates: ['freeze'], revision: REVISION, windowMs: 3_600_000, reason: `INC-77 [runbook ${ID}]` },
    });
  });

  it('empty gates mean every gate of the one delivery named', async () => {
    const parameters = { ...record().parameters, gates: [], deliveries: ['web'] };
    expect((await verify(record({ parameters }))).event).toMatchObject({
      allGates: true,
      deliveries: ['web'],
    });
    await expect(verify(record({ parameters: { ...parameters, deliveries: [] } }))).rejects.toThrow(
      /parameters: "allGates" overrides every gate of one delivery/,
    );
  });

  it('refuses an execution started more than ten minutes ago', async () => {
    const old = new Date(NOW.getTime() - MAX_BREAK_GLASS_EXECUTION_AGE_MS - 1);
    await expect(verify(record({}, old))).rejects.toThrow(
      /more than ten minutes ago: start the break-glass runbook again/,
    );
    expect(
      (await verify(record({}, new Date(NOW.getTime() - MAX_BREAK_GLASS_EXECUTION_AGE_MS)))).startedBy,
    ).toBeDefined();
  });

  it('refuses a record naming no starter, another document, or no running override step', async () => {
    const { executedBy: _, ...anonymous } = record();
    await expect(verify(anonymous)).rejects.toThrow(/records no principal that started it/);
    await expect(verify(record({ documentName: 'mallorys-runbook' }))).rejects.toThrow(
      /ran the document 'mallorys-runbook', which is not this function's break-glass runbook/,
    );
    await expect(verify(record(), '')).rejects.toThrow(/it has none: grantBreakGlass makes it/);
    const approve = { ...record().steps[0]!, action: 'aws:approve' };
    await expect(verify(record({ steps: [approve] }))).rejects.toThrow(
      /is not running its 'override' step \(aws:approve/,
    );
    await expect(verify(record({ steps: [] }))).rejects.toThrow(/\(it has none\)/);
  });

  it('refuses a parameter with several values', async () => {
    const parameters = { ...record().parameters, revision: [REVISION, REVISION] };
    await expect(verify(record({ parameters }))).rejects.toThrow(
      /parameters: parameter revision has several values/,
    );
  });
});
