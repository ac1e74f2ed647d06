// The mass-deletion brake: a revision that would prune more than the delivery's pruneLimit is held
// (reason PruneLimitExceeded), nothing applied or pruned, until its pruneLimitGate is opened; the
// opening reconciles it at once and is audited like any gate request.
import { describe, expect, it } from 'vitest';
import { parseConfig, parseDelivery, type ConfigError } from '../../functions/core/config/index.ts';
import { parseGateEvent } from '../../functions/core/gates/event.ts';
import { handleGateEvent } from '../../functions/core/gates/requests.ts';
import { exceedsPruneLimit } from '../../functions/core/reconcile/prune-limit.ts';
import { listGateAudit } from '../../functions/core/store/gates.ts';
import { readInventory } from '../../functions/core/store/inventory.ts';
import { getStatus } from '../../functions/core/store/status.ts';
import { writesSince } from '../support/audit.ts';
import { engineDeps, pushFiles, registerDelivery, run } from '../support/deliveries.ts';
import { inProcessGateDeps, manualClock, registerGate } from '../support/gates.ts';
import { createNamespace, testbed, uniqueName } from '../support/testbed.ts';

const bed = testbed();
const kc = bed.kubeConfig();

/** A delivery of `count` ConfigMaps; `keep(n)` pushes a revision holding only the first n. */
async function delivery(prefix: string, count: number, spec: Record<string, unknown> = {}) {
  const clock = manualClock(new Date().toISOString());
  const deps = { ...engineDeps(), clock };
  const ns = uniqueName(prefix);
  const repository = uniqueName(`prune-limit/${prefix}`);
  const name = uniqueName(prefix);
  await createNamespace(kc, ns);
  const cm = (i: number) =>
    `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-${i}\n  namespace: ${ns}\ndata:\n  i: "${i}"\n`;
  const keep = (n: number) =>
    pushFiles(bed, repository, 'main', {
      'a.yaml': Array.from({ length: n }, (_, i) => cm(i)).join('---\n') || '# nothing\n',
    });
  await registerDelivery(deps, bed, { name, repository, prune: true, ...spec });
  await keep(count);
  expect(await run(name, deps)).toMatchObject({ outcome: 'Succeeded', changes: { created: count } });
  return { deps, clock, ns, name, keep };
}

describe('the mass-deletion brake', () => {
  it('holds a revision pruning more than 50% of 10+ objects until the approval gate opens, then reconciles at once', async () => {
    const gate = uniqueName('mass-prune');
    const { deps, clock, ns, name, keep } = await delivery('brake', 12, { pruneLimitGate: gate });
    await registerGate(deps, { name: gate, default: 'closed', window: '1h' });
    const inventory = await readInventory(deps.db, name);

    await keep(5); // prunes 7 of 12
    const since = new Date().toISOString();
    const held = await run(name, deps);
    expect(held).toMatchObject({ outcome: 'Blocked', reason: 'PruneLimitExceeded' });
    expect(held.message).toMatch(
      new RegExp(
        `^revision main@sha256:[a-f0-9]{64} would delete 7 of the 12 objects of delivery '${name}' \\(58%\\), more than pruneLimit 50%; nothing was applied or pruned\\. ` +
          `Would delete: ConfigMap/${ns}/cm-\\d+, .*, and 2 more\\. ` +
          `Gate '${gate}' is closed: open it to allow this \\(sluice gate open ${gate} --revision main@sha256:[a-f0-9]{64} --for 15m --reason <why>\\)$`,
      ),
    );
    expect(await getStatus(deps.db, name)).toMatchObject({
      ready: false,
      reason: 'PruneLimitExceeded',
      message: held.message,
      pendingRevision: held.revision,
      blockedBy: [{ name: gate }],
    });
    expect(writesSince(bed, ns, since)).toEqual([]);
    expect(await readInventory(deps.db, name)).toEqual(inventory);

    // Held again on the next run, still nothing written; blockedSince keeps the first hold, and the
    // result says it too (the handler's BlockedSeconds metric reads it there).
    const firstHeld = (await getStatus(deps.db, name))?.blockedSince;
    expect(held.blockedSince).toBe(firstHeld);
    clock.advance(60_000);
    expect(await run(name, deps)).toMatchObject({
      outcome: 'Blocked',
      reason: 'PruneLimitExceeded',
      blockedSince: firstHeld,
    });
    expect((await getStatus(deps.db, name))?.blockedSince).toBe(firstHeld);
    expect(writesSince(bed, ns, since)).toEqual([]);

    // Approval: opening the gate reconciles the held delivery in the same request.
    const gateDeps = inProcessGateDeps(deps);
    const opened = await handleGateEvent(
      parseGateEvent({
        gate,
        action: 'open',
        reason: 'CHG-42 retire cm-5..11',
        requestedBy: 'alice',
        source: 'cli',
      }),
      gateDeps,
    );
    expect(opened.reconciling).toEqual([name]);
    expect(gateDeps.reconciled).toMatchObject([
      { delivery: name, outcome: 'Succeeded', changes: { deleted: 7, unchanged: 5 } },
    ]);
    expect((await readInventory(deps.db, name)).map((e) => e.id.split('_')[1]).sort()).toEqual(
      ['cm-0', 'cm-1', 'cm-2', 'cm-3', 'cm-4'].sort(),
    );
    expect(await getStatus(deps.db, name)).toMatchObject({ ready: true, reason: 'ReconciliationSucceeded' });
    expect((await getStatus(deps.db, name))?.blockedSince).toBeUndefined();
    expect((await listGateAudit(deps.db, gate))[0]).toMatchObject({
      action: 'open',
      requestedBy: 'alice',
      reason: 'CHG-42 retire cm-5..11',
      outcome: 'accepted',
    });

    // Once the window has passed the gate is closed again and a new mass deletion is held.
    clock.advance(2 * 3_600_000);
    await keep(12);
    expect(await run(name, deps)).toMatchObject({ outcome: 'Succeeded', changes: { created: 7 } });
    await keep(1);
    expect(await run(name, deps)).toMatchObject({ outcome: 'Blocked', reason: 'PruneLimitExceeded' });
  });

  it('lets a prune of exactly the limit through, and says how to allow more when no gate is named', async () => {
    const { deps, name, keep } = await delivery('nogate', 10);
    await keep(5); // exactly 50%
    expect(await run(name, deps)).toMatchObject({ outcome: 'Succeeded', changes: { deleted: 5 } });
    await keep(10);
    expect((await run(name, deps)).outcome).toBe('Succeeded');
    await keep(4);
    const held = await run(name, deps);
    expect(held).toMatchObject({ outcome: 'Blocked', reason: 'PruneLimitExceeded' });
    expect(held.message).toMatch(
      /Raise pruneLimit, or name a gate in pruneLimitGate and open it, to allow this$/,
    );
  });

  it('a count limit applies to any inventory; a share only from 10 objects; 100% turns the brake off', async () => {
    const counted = await delivery('count', 4, { pruneLimit: 2 });
    await counted.keep(1); // 3 > 2
    expect(await run(counted.name, counted.deps)).toMatchObject({
      outcome: 'Blocked',
      reason: 'PruneLimitExceeded',
    });
    await counted.keep(2); // 2
    expect(await run(counted.name, counted.deps)).toMatchObject({
      outcome: 'Succeeded',
      changes: { deleted: 2 },
    });

    const small = await delivery('small', 4);
    await small.keep(1); // 75% of 4: too few objects for a share to apply
    expect(await run(small.name, small.deps)).toMatchObject({
      outcome: 'Succeeded',
      changes: { deleted: 3 },
    });

    const off = await delivery('off', 10, { pruneLimit: '100%' });
    await off.keep(1);
    expect(await run(off.name, off.deps)).toMatchObject({ outcome: 'Succeeded', changes: { deleted: 9 } });
  });
});

describe('pruneLimit config', () => {
  const base = { name: 'web', source: { url: 'oci://127.0.0.1:5000/web' }, cluster: { kubeconfig: './kc' } };
  const problem = (input: Record<string, unknown>) => {
    try {
      parseDelivery({ ...base, ...input });
      return '';
    } catch (error) {
      return (error as ConfigError).message;
    }
  };

  it('takes a share or a count, and leaves the default to the engine', () => {
    expect(parseDelivery({ ...base, pruneLimit: '30%' }).pruneLimit).toEqual({ percent: 30 });
    expect(parseDelivery({ ...base, pruneLimit: 20 }).pruneLimit).toEqual({ count: 20 });
    expect(parseDelivery({ ...base, pruneLimit: '0' }).pruneLimit).toEqual({ count: 0 });
    expect(parseDelivery(base).pruneLimit).toBeUndefined();
    for (const bad of ['abc', '150%', -1, 1.5, '50 %'])
      expect(problem({ pruneLimit: bad })).toMatch(
        /pruneLimit: .* is not a prune limit: use a share of the inventory like "50%" or a number of objects like 20/,
      );
  });

  it('pruneLimitGate must name a defined gate', () => {
    expect(() =>
      parseConfig({
        gates: [{ name: 'approve', default: 'closed' }],
        deliveries: [{ ...base, pruneLimitGate: 'aprove' }],
      }),
    ).toThrow(
      /deliveries\[web\]\.pruneLimitGate: delivery "web" references gate "aprove", which is not defined in gates \(did you mean "approve"\?/,
    );
  });

  it('counts strictly more than the limit, shares only from 10 objects', () => {
    expect(exceedsPruneLimit({ percent: 50 }, 5, 10)).toBe(false);
    expect(exceedsPruneLimit({ percent: 50 }, 6, 10)).toBe(true);
    expect(exceedsPruneLimit({ percent: 50 }, 9, 9)).toBe(false);
    expect(exceedsPruneLimit({ percent: 0 }, 1, 10)).toBe(true);
    expect(exceedsPruneLimit({ count: 0 }, 1, 1)).toBe(true);
    expect(exceedsPruneLimit({ count: 3 }, 3, 3)).toBe(false);
  });
});
