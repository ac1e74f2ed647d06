// The index items that say which deliveries pull from a repository, use a gate or depend on a
// delivery. putDelivery and removeDelivery keep them in step with the specs, in the same transaction.
import type { Delivery } from '../config/index.ts';
import { parseEcrHost, parseReference } from '../oci/index.ts';
import type { TableClient } from './table-client.ts';

/** `team/app` → the partition listing the deliveries whose source is that repository (any registry). */
export const repositoryLookupKey = (repository: string) => `lookup#repository#${repository}`;
/** The partition listing the deliveries that reference a gate (in `gates`, or as their pruneLimitGate). */
export const gateLookupKey = (gate: string) => `lookup#gate#${gate}`;

/** The partition listing the deliveries whose `dependsOn` names a delivery. */
export const dependentsLookupKey = (delivery: string) => `lookup#depends-on#${delivery}`;

/** One index item: the delivery is its sort key; an ECR source also records its registry's account and region. */
export interface LookupEntry {
  readonly pk: string;
  readonly sk: string;
  readonly account?: string;
  readonly region?: string;
}

/** The index items a delivery's spec calls for. */
export function lookupEntries(delivery: Delivery): LookupEntry[] {
  const { host, repository } = parseReference(delivery.source.url);
  const ecr = parseEcrHost(host);
  const gates = new Set(delivery.gates.map((ref) => ref.name));
  if (delivery.pruneLimitGate) gates.add(delivery.pruneLimitGate);
  return [
    {
      pk: repositoryLookupKey(repository),
      sk: delivery.name,
      ...(ecr && { account: ecr.account, region: ecr.region }),
    },
    ...[...gates].map((gate) => ({ pk: gateLookupKey(gate), sk: delivery.name })),
    ...delivery.dependsOn.map(({ name }) => ({ pk: dependentsLookupKey(name), sk: delivery.name })),
  ];
}

const sameEntry = (a: LookupEntry, b: LookupEntry) =>
  a.pk === b.pk && a.sk === b.sk && a.account === b.account && a.region === b.region;

/** What changing a delivery's spec from `before` to `after` writes to the index, as transaction items. */
export function lookupChanges(
  db: TableClient,
  before: Delivery | undefined,
  after: Delivery | undefined,
): Record<string, unknown>[] {
  const old = before ? lookupEntries(before) : [];
  const next = after ? lookupEntries(after) : [];
  const kept = (entry: LookupEntry, among: LookupEntry[]) => among.some((other) => sameEntry(entry, other));
  return [
    ...old
      .filter((entry) => !next.some((n) => n.pk === entry.pk && n.sk === entry.sk))
      .map((entry) => ({ Delete: { TableName: db.table, Key: { pk: entry.pk, sk: entry.sk } } })),
    ...next
      .filter((entry) => !kept(entry, old))
      .map((entry) => ({ Put: { TableName: db.table, Item: { ...entry } } })),
  ];
}
