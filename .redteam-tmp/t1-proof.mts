import { startSts, clock, newGate, makeHandler, signed, urlEvent, attempt, entry, FN, IDS } from './lib.mts';
import { getGateRequest } from '../functions/core/store/gates.ts';
const sts = await startSts();
const c = { now: () => new Date() };
const h = makeHandler(sts, c);
const g = await newGate({ default: 'closed' });
// 1 baseline
const body = await signed('alice', { gate: g.name, action: 'open', window: '1h', reason: 'CHG-1' });
await attempt('baseline url', () => h(urlEvent(body), { invokedFunctionArn: entry('open', g.name) }));
// 2 replay
await attempt('replay', () => h(urlEvent(body), { invokedFunctionArn: entry('open', g.name) }));
// 3 concurrent replay of a fresh proof
const b2 = await signed('alice', { gate: g.name, action: 'close', reason: 'x' });
const rs = await Promise.all([1, 2, 3, 4].map((i) => attempt('race' + i, () => h(urlEvent(b2), { invokedFunctionArn: entry('close', g.name) }))));
// 4 alter window / reason
const b3 = await signed('alice', { gate: g.name, action: 'open', window: '1h', reason: 'CHG-2' });
await attempt('alter window 60m', () => h(urlEvent({ ...b3, window: '60m' }), { invokedFunctionArn: entry('open', g.name) }));
await attempt('alter reason NFD', () => h(urlEvent({ ...b3, reason: 'CHG-2\u0301' }), { invokedFunctionArn: entry('open', g.name) }));
await attempt('extra requestedBy', () => h(urlEvent({ ...b3, requestedBy: 'bob' }), { invokedFunctionArn: entry('open', g.name) }));
await attempt('extra deliveries', () => h(urlEvent({ ...b3, deliveries: ['x'] }), { invokedFunctionArn: entry('open', g.name) }));
await attempt('window null', () => h(urlEvent({ ...b3, window: null }), { invokedFunctionArn: entry('open', g.name) }));
// duplicate keys json
const raw = JSON.stringify(b3).replace('"window":"1h"', '"window":"1y","window":"1h"');
await attempt('dup keys', () => h(urlEvent(raw), { invokedFunctionArn: entry('open', g.name) }));
// alias confusion
await attempt('via close entry', () => h(urlEvent(b3), { invokedFunctionArn: entry('close', g.name) }));
await attempt('via $LATEST', () => h(urlEvent(b3), { invokedFunctionArn: FN + ':$LATEST' }));
await attempt('other function', () => h(urlEvent(b3), { invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:other:open_' + g.name }));
await attempt('extra colon', () => h(urlEvent(b3), { invokedFunctionArn: entry('open', g.name) + ':x' }));
await attempt('direct invoke with proof', () => h(b3, { invokedFunctionArn: entry('open', g.name) }));
console.log('stored', JSON.stringify(await getGateRequest((await import('./lib.mts')).db, g.name)));
console.log('sts saw', sts.seen.length);
sts.close();
