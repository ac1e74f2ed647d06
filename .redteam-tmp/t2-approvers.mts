import { startSts, newGate, makeHandler, signed, urlEvent, attempt, entry, db } from './lib.mts';
import { getGateRequest } from '../functions/core/store/gates.ts';
const sts = await startSts();
const h = makeHandler(sts, { now: () => new Date() });
const rev = 'v1@sha256:' + 'a'.repeat(64);
async function pair(a: string, b: string, wa?: string, wb?: string) {
  const g = await newGate({ default: 'closed', approvers: 2, approval: 'revision' });
  const ra: any = { gate: g.name, action: 'open', revision: rev, ...(wa && { window: wa }) };
  const rb: any = { gate: g.name, action: 'open', revision: rev, ...(wb && { window: wb }) };
  await attempt(`${a} approves`, async () => h(urlEvent(await signed(a as never, ra)), { invokedFunctionArn: entry('open', g.name) }));
  await attempt(`${b} approves`, async () => h(urlEvent(await signed(b as never, rb)), { invokedFunctionArn: entry('open', g.name) }));
  const stored = await getGateRequest(db, g.name);
  console.log(`  => stored: ${stored ? `${stored.action} window=${stored.windowMs} approvedBy=${JSON.stringify(stored.approvedBy)}` : 'none'}`);
}
await pair('mallory', 'malloryAsBob');
await pair('alice', 'aliceAdmin');
await pair('fakeSsoAlice', 'fakeSsoBob');
await pair('alice', 'bob', '5m', undefined);
sts.close();
