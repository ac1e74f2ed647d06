import { DeleteCommand, GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { queryPartition, type TableClient } from './table-client.ts';

/** Where one kind of spec lives: its partition per name, and the index item listing the names. */
export interface SpecKind {
  readonly key: (name: string) => string;
  readonly index: string;
}

/** Writes a spec and its index entry together. */
export async function putSpec(
  db: TableClient,
  kind: SpecKind,
  spec: { readonly name: string },
  registeredAt: Date,
): Promise<void> {
  await db.doc.send(
    new TransactWriteCommand({
      TransactItems: [
        {
          Put: {
            TableName: db.table,
            Item: { pk: kind.key(spec.name), sk: 'spec', spec, registeredAt: registeredAt.toISOString() },
          },
        },
        { Put: { TableName: db.table, Item: { pk: kind.index, sk: spec.name } } },
      ],
    }),
  );
}

export async function getSpec<T>(db: TableClient, kind: SpecKind, name: string): Promise<T | undefined> {
  const { Item } = await db.doc.send(
    new GetCommand({ TableName: db.table, Key: { pk: kind.key(name), sk: 'spec' }, ConsistentRead: true }),
  );
  return Item?.spec as T | undefined;
}

export async function listSpecNames(db: TableClient, kind: SpecKind): Promise<string[]> {
  return (await queryPartition(db, kind.index)).map((item) => item.sk as string);
}

/**
 * Removes every item under the name's partition (spec, status, inventory, requests, ...) and its
 * index entry; the items of sort keys `together`, last and in one transaction.
 */
export async function removeSpec(
  db: TableClient,
  kind: SpecKind,
  name: string,
  together: readonly string[] = [],
): Promise<void> {
  for (const item of await queryPartition(db, kind.key(name), { projection: 'pk, sk' })) {
    if (together.includes(item.sk as string)) continue;
    await db.doc.send(new DeleteCommand({ TableName: db.table, Key: { pk: item.pk, sk: item.sk } }));
  }
  if (together.length > 0)
    await db.doc.send(
      new TransactWriteCommand({
        TransactItems: together.map((sk) => ({
          Delete: { TableName: db.table, Key: { pk: kind.key(name), sk } },
        })),
      }),
    );
  await db.doc.send(new DeleteCommand({ TableName: db.table, Key: { pk: kind.index, sk: name } }));
}
