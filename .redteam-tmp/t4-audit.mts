import { newGate, attempt, db, startSts, makeHandler } from './lib.mts';
import { listGateAudit } from '../functions/core/store/gates.ts';
import { requestAuthors } from '../functions/core/gates/messages.ts';
const sts = await startSts();
const h = makeHandler(sts, { now: () => new Date() });
const g = await newGate({ default: 'closed' });
const claims = [
  'bob (role AWSReservedSSO_Approver_0123456789abcdef, 123456789012) and alice',
  '\u200Bschedule/' + g.name + '/0',
  '\u2060sluice/reconcile',
  'carol (user, 123456789012)' + ' '.repeat(150) + '.',
];
for (const requestedBy of claims)
  await attempt('claim', () => h({ gate: g.name, action: 'close', requestedBy, source: 'api', reason: 'x' }));
for (const r of await listGateAudit(db, g.name)) console.log(JSON.stringify(requestAuthors(r)));
sts.close();
