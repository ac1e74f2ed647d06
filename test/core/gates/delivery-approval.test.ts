// Approvals that name the deliveries they are for, on the real components: a gate opened for one
// delivery lets that one through and holds every other delivery using it.
import { CoreV1Api } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { GateEventError, parseGateEvent } from '../../../functions/core/gates/event.ts';
import { gateRequestDigest } from '../../../functions/core/access/proof.ts';
import { handleGateEvent } from '../../../functions/core/gates/requests.ts';
import { getStatus } from '../../../functions/core/store/status.ts';
import { engineDeps, pushFiles, registerDelivery, run } from '../../support/deliveries.ts';
import {
  configMapValue,
  configMapYaml,
  inProcessGateDeps,
  manualClock,
  registerGate,
} from '../../support/gates.ts';
import { createNamespace, testbed, uniqueName } from '../../support/testbed.ts';

const bed = testbed();
const core = bed.kubeConfig().makeApiClient(CoreV1Api);

/** A closed gate in front of two deliveries, each with a revision waiting. */
async function twoDeliveries(gateSpec: Record<string, unknown> = {}) {
  const clock = manualClock('2026-06-01T09:00:00Z');
  const deps = { ...engineDeps(), clock };
  const gate = uniqueName('cab');
  await registerGate(deps, { name: gate, default: 'closed', window: '1h', ...gateSpec });
  const deliveries: { name: string; ns: string }[] = [];
  for (const app of ['web', 'api']) {
    const name = uniqueName(app);
    const ns = uniqueName(app);
    const repository = uniqueName(`${app}/app`);
    await createNamespace(bed.kubeConfig(), ns);
    await registerDelivery(deps, bed, {
      name,
      repository,
      tag: 'release',
      gates: [{ name: gate, blocks: 'all' }],
    });
    await pushFiles(bed, repository, 'release', { 'cm.yaml': configMapYaml('app', ns, `${app}-1`) });
    expect(await run(name, deps)).toMatchObject({ outcome: 'Blocked' });
    deliveries.push({ name, ns });
  }
  const gateDeps = inProcessGateDeps(deps);
  const open = (fields: Record<string, unknown>, by = 'alice') =>
    handleGateEvent(
      parseGateEvent({ gate, action: 'open', source: 'cli', requestedBy: by, reason: 'CHG-8', ...fields }),
      gateDeps,
    );
  return { clock, deps, gate, web: deliveries[0]!, api: deliveries[1]!, gateDeps, open };
}

describe('an approval for named deliveries', () => {
  it('opens the gate for those deliveries only; the others stay held and say for whom it is open', async () => {
    const { deps, gate, web, api, open } = await twoDeliveries();
    const opened = await open({ deliveries: [web.name] });
    expect(opened).toMatchObject({ outcome: 'accepted', reconciling: [web.name] });
    expect(opened.status).toMatchObject({ state: 'open', deliveries: [web.name] });
    expect(opened.message).toContain(`for deliveries ${web.name} only`);
    expect(await configMapValue(core, 'app', web.ns)).toBe('web-1');

    const held = await run(api.name, deps);
    expect(held).toMatchObject({ outcome: 'Blocked' });
    expect(held.message).toContain(
      `waiting for gate '${gate}' (open only for ${web.name}, approved by alice`,
    );
    expect(await configMapValue(core, 'app', api.ns)).toBeUndefined();
    expect((await getStatus(deps.db, api.name))?.blockedBy?.[0]).toMatchObject({
      name: gate,
      openFor: { deliveries: [web.name] },
    });
  });

  it('a later approval for every delivery lets the held one through', async () => {
    const { clock, deps, api, open, web } = await twoDeliveries();
    await open({ deliveries: [web.name] });
    clock.advance(60_000);
    expect(await open({})).toMatchObject({ outcome: 'accepted', reconciling: [web.name, api.name].sort() });
    expect(await run(api.name, deps)).toMatchObject({ outcome: 'Succeeded' });
    expect(await configMapValue(core, 'app', api.ns)).toBe('api-1');
  });

  it('refuses a delivery that does not use the gate, naming it, and records nothing', async () => {
    const { gate, web, open } = await twoDeliveries();
    await expect(open({ deliveries: [web.name, 'payments'] })).rejects.toThrow(
      new GateEventError(
        `gate '${gate}' holds no delivery named 'payments': an open request can be for deliveries that use the gate only`,
      ).message,
    );
  });

  it('refuses deliveries on a close, an empty list and a name that is not one', () => {
    const event = (fields: Record<string, unknown>) => () =>
      parseGateEvent({ gate: 'g', action: 'open', source: 'cli', ...fields });
    expect(event({ action: 'close', deliveries: ['web'] })).toThrow(
      '"deliveries" names what an open request is for; it does not apply to "close"',
    );
    expect(event({ deliveries: [] })).toThrow('"deliveries" must be a non-empty list of delivery names');
    expect(event({ deliveries: ['web', 'Not A Name'] })).toThrow(
      '"deliveries"[1]: "Not A Name" is not a delivery name',
    );
    expect(
      parseGateEvent({ gate: 'g', action: 'open', source: 'cli', deliveries: ['b', 'a', 'b'] }),
    ).toMatchObject({ deliveries: ['a', 'b'] });
  });

  it('approvals for different deliveries do not add up to a two-person rule', async () => {
    const { clock, web, api, gateDeps, gate } = await twoDeliveries({ approvers: 2 });
    const signed = (principal: string, deliveries: string[]) =>
      handleGateEvent(parseGateEvent({ gate, action: 'open', deliveries }, { signed: true }), gateDeps, {
        principal,
        verified: true,
      });
    const sso = (who: string) =>
      `arn:aws:sts::123456789012:assumed-role/AWSReservedSSO_Approver_0123456789abcdef/${who}`;
    expect(await signed(sso('alice'), [web.name])).toMatchObject({ outcome: 'pending' });
    clock.advance(60_000);
    const other = await signed(sso('bob'), [api.name]);
    expect(other).toMatchObject({ outcome: 'pending', status: { state: 'closed' } });
    clock.advance(60_000);
    expect(await signed(sso('carol'), [api.name])).toMatchObject({
      outcome: 'accepted',
      status: { state: 'open', deliveries: [api.name] },
    });
  });

  it('a signed request binds its deliveries: the proof of a request for one is no proof for another', () => {
    const base = { gate: 'g', action: 'open' };
    expect(gateRequestDigest({ ...base, deliveries: ['web'] })).not.toBe(
      gateRequestDigest({ ...base, deliveries: ['api'] }),
    );
    expect(gateRequestDigest({ ...base, deliveries: ['web'] })).not.toBe(gateRequestDigest(base));
  });
});
