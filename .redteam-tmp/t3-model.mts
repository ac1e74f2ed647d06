import { startSts, newGate, signed, urlEvent, attempt, entry, db, clock } from './lib.mts';
import { getGateRequest } from '../functions/core/store/gates.ts';
import { gateHandler } from '../functions/gate/handler.ts';
import { stsCallerIdentity } from '../functions/core/aws/sts-caller-identity.ts';
import { gateStateAt } from '../functions/core/gates/state.ts';
import { getGate } from '../functions/core/store/gates.ts';
const sts = await startSts();
const S = stsCallerIdentity(sts.endpoint);
const rev = 'v1@sha256:' + 'b'.repeat(64);
const state = async (name: string, at: string) => {
  const g = (await getGate(db, name))!; const r = await getGateRequest(db, name);
  const s = gateStateAt(g, r, new Date(at)); return `${s.state} (${s.lastRequest?.action ?? '-'} by ${s.lastRequest?.approvedBy ?? s.lastRequest?.requestedBy ?? '-'})`;
};
// NB: proofs are checked against the real clock (X-Amz-Date); the gate's clock decides request times.
// verifyProof uses deps.clock for expiry, so keep the manual clock within 5 min of real time for proofs:
// instead we pass a clock used for both, set near real time, and shift the gate schedule accordingly.
{
  console.log('--- (a) scheduled close does not drop pending approvals; a person\'s close does');
  const now = new Date();
  // a close schedule firing at the next whole minute + 1, window 24h
  const fire = new Date(Math.ceil(now.getTime() / 60000) * 60000 + 60000);
  const cron = `${fire.getUTCMinutes()} ${fire.getUTCHours()} * * ? *`;
  for (const variant of ['schedule', 'person']) {
    const g = await newGate({ default: 'closed', approvers: 2, approval: 'revision', schedules: [{ cron, timeZone: 'UTC', action: 'close', window: '24h' }] });
    const c = clock(new Date(fire.getTime() - 30_000).toISOString());
    const h = gateHandler(() => ({ db, clock: c, sts: S }));
    await attempt('alice approves before the freeze', async () => h(urlEvent(await signed('alice', { gate: g.name, action: 'open', revision: rev })), { invokedFunctionArn: entry('open', g.name) }));
    c.set(fire.toISOString());
    if (variant === 'schedule')
      await attempt('schedule close fires', () => h({ gate: g.name, action: 'close', source: 'schedule', requestedAt: fire.toISOString() }));
    else
      await attempt('person closes', async () => h(urlEvent(await signed('carol', { gate: g.name, action: 'close', window: '24h' })), { invokedFunctionArn: entry('close', g.name) }));
    c.set(new Date(fire.getTime() + 60_000).toISOString());
    await attempt('bob approves during the freeze', async () => h(urlEvent(await signed('bob', { gate: g.name, action: 'open', revision: rev })), { invokedFunctionArn: entry('open', g.name) }));
    console.log(`  ${variant}: state now: ${await state(g.name, c.now().toISOString())}`);
  }
}
{
  console.log('--- (b) close racing an approval: the close is recorded, the approval completes before the close drops approvals');
  const g = await newGate({ default: 'closed', approvers: 2, approval: 'revision' });
  const t0 = Date.now();
  const c = clock(new Date(t0).toISOString());
  let release!: () => void; const gateOpen = new Promise<void>((r) => (release = r));
  let held!: () => void; const reachedClear = new Promise<void>((r) => (held = r));
  const slowDb = { table: db.table, doc: { send: async (cmd: any) => {
    if (cmd.constructor.name === 'DeleteCommand' && cmd.input.Key?.sk === 'approvals') { held(); await gateOpen; }
    return db.doc.send(cmd);
  } } } as any;
  const hClose = gateHandler(() => ({ db: slowDb, clock: c, sts: S }));
  const h = gateHandler(() => ({ db, clock: c, sts: S }));
  await attempt('alice approves', async () => h(urlEvent(await signed('alice', { gate: g.name, action: 'open', revision: rev })), { invokedFunctionArn: entry('open', g.name) }));
  c.set(new Date(t0 + 1000).toISOString());
  const closing = attempt('carol closes', async () => hClose(urlEvent(await signed('carol', { gate: g.name, action: 'close' })), { invokedFunctionArn: entry('close', g.name) }));
  await reachedClear;
  c.set(new Date(t0 + 2000).toISOString());
  await attempt('bob approves (close recorded, approvals not yet dropped)', async () => h(urlEvent(await signed('bob', { gate: g.name, action: 'open', revision: rev })), { invokedFunctionArn: entry('open', g.name) }));
  release(); await closing;
  console.log(`  state: ${await state(g.name, c.now().toISOString())}`);
}
{
  console.log('--- (c) a close made just before an open but stored after it is dropped (stale)');
  const g = await newGate({ default: 'open' });
  const t0 = Date.now();
  const cClose = clock(new Date(t0).toISOString());       // the close request's instance: its clock read first
  const cOpen = clock(new Date(t0 + 50).toISOString());   // the open request's instance, 50 ms later, writes first
  const hClose = gateHandler(() => ({ db, clock: cClose, sts: S }));
  const hOpen = gateHandler(() => ({ db, clock: cOpen, sts: S }));
  await attempt('carol closes (1h) — previous stored: none', async () => null);
  await attempt('alice opens for 5m', async () => hOpen(urlEvent(await signed('alice', { gate: g.name, action: 'open', window: '5m' })), { invokedFunctionArn: entry('open', g.name) }));
  await attempt('carol closes for 1h, timed 50ms earlier', async () => hClose(urlEvent(await signed('carol', { gate: g.name, action: 'close', window: '1h' })), { invokedFunctionArn: entry('close', g.name) }));
  console.log(`  state at +6m (model: closed by carol's 1h close): ${await state(g.name, new Date(t0 + 6 * 60_000).toISOString())}`);
}
sts.close();
