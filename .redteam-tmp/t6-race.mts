import { startSts, newGate, makeHandler, signed, urlEvent, entry, db } from './lib.mts';
import { getGateRequest } from '../functions/core/store/gates.ts';
const sts = await startSts();
const h = makeHandler(sts, { now: () => new Date() });
for (let round = 0; round < 3; round++) {
  const g = await newGate({ default: 'closed', approvers: 2 });
  const bodies = await Promise.all(['mallory', 'malloryAsBob', 'mallory', 'malloryAsBob'].map((w) => signed(w as never, { gate: g.name, action: 'open' })));
  const rs = await Promise.all(bodies.map((b) => h(urlEvent(b), { invokedFunctionArn: entry('open', g.name) }).then((r: any) => JSON.parse(r.body).outcome ?? r.statusCode, (e) => e.message)));
  console.log(round, rs, 'stored:', (await getGateRequest(db, g.name))?.action ?? 'none');
}
sts.close();
