import { startSts, newGate, makeHandler, signed, urlEvent, attempt, entry, db } from './lib.mts';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { gateKey } from '../functions/core/store/table-client.ts';
import { getGateRequest } from '../functions/core/store/gates.ts';
import { approverKey } from '../functions/core/gates/approver-key.ts';
const sts = await startSts();
const h = makeHandler(sts, { now: () => new Date() });
// pending approval item as written before approver keys (principal only)
const g = await newGate({ default: 'closed', approvers: 2 });
await db.doc.send(new PutCommand({ TableName: db.table, Item: { pk: gateKey(g.name), sk: 'approvals', version: 1,
  pending: { approvals: [{ principal: 'arn:aws:sts::123456789012:assumed-role/Approver/mallory', at: new Date().toISOString() }], expiresAt: new Date(Date.now() + 3600e3).toISOString() } } }));
await attempt('malloryAsBob approves over a pre-upgrade approval by mallory', async () => h(urlEvent(await signed('malloryAsBob', { gate: g.name, action: 'open' })), { invokedFunctionArn: entry('open', g.name) }));
console.log('  stored:', (await getGateRequest(db, g.name))?.approvedBy);
// sessionNamedRoles by bare name matches any account
const gate = { sessionNamedRoles: ['Approver'] };
console.log(approverKey('arn:aws:sts::999999999999:assumed-role/Approver/alice', gate));
console.log(approverKey('arn:aws:sts::999999999999:assumed-role/Approver/bob', gate));
sts.close();
