import { DynamoDBClient, type ConsumedCapacity } from '@aws-sdk/client-dynamodb';

/** DynamoDB requests and the capacity DynamoDB Local says they consumed, by operation. */
export interface TableUse {
  readonly requests: Record<string, number>;
  /** Read request units (strongly consistent reads count 1 per 4 KB, eventually consistent half). */
  readonly readUnits: number;
  /** Write request units (1 per KB written; transactions twice). */
  readonly writeUnits: number;
  /** Read and write units by operation (absent from runs recorded before it was kept). */
  readonly unitsByOperation?: Record<string, { readonly read: number; readonly write: number }>;
}

/**
 * A DynamoDB client that asks for ConsumedCapacity on every request and adds it up, with the
 * requests by operation; `take()` returns what was counted since the last take.
 */
export function meteredDynamoDb(
  /** Told of each cluster slot taken (+1) or freed (-1), by the slot's partition key. */
  onSlot: (pk: string, change: 1 | -1) => void = () => {},
): { client: DynamoDBClient; take(): TableUse } {
  const client = new DynamoDBClient({});
  let requests: Record<string, number> = {};
  let readUnits = 0;
  let writeUnits = 0;
  let byOperation: Record<string, { read: number; write: number }> = {};
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const operation = context.commandName ?? 'unknown';
      requests[operation] = (requests[operation] ?? 0) + 1;
      (args.input as { ReturnConsumedCapacity?: string }).ReturnConsumedCapacity = 'TOTAL';
      const result = await next(args);
      const input = args.input as {
        Item?: { pk?: unknown };
        Key?: { pk?: unknown };
        TransactItems?: { Delete?: { Key?: { pk?: unknown } } }[];
      };
      const slot = (key: unknown) => typeof key === 'string' && key.startsWith('cluster#');
      if (operation === 'PutItemCommand' && slot(input.Item?.pk)) onSlot(input.Item!.pk as string, 1);
      if (operation === 'DeleteItemCommand' && slot(input.Key?.pk)) onSlot(input.Key!.pk as string, -1);
      // A run may free its slot in the transaction that writes its status.
      for (const item of operation === 'TransactWriteItemsCommand' ? (input.TransactItems ?? []) : [])
        if (slot(item.Delete?.Key?.pk)) onSlot(item.Delete!.Key!.pk as string, -1);
      const consumed = (result.output as { ConsumedCapacity?: ConsumedCapacity | ConsumedCapacity[] })
        .ConsumedCapacity;
      const units = (byOperation[operation] ??= { read: 0, write: 0 });
      for (const c of [consumed ?? []].flat()) {
        let read = c.ReadCapacityUnits ?? 0;
        let write = c.WriteCapacityUnits ?? 0;
        // Some operations report only the total.
        if (c.ReadCapacityUnits === undefined && c.WriteCapacityUnits === undefined && c.CapacityUnits) {
          if (/^(Get|Query|Scan|BatchGet|TransactGet)/.test(operation)) read = c.CapacityUnits;
          else write = c.CapacityUnits;
        }
        readUnits += read;
        writeUnits += write;
        units.read += read;
        units.write += write;
      }
      return result;
    },
    { step: 'initialize', name: 'sluiceScaleMeter' },
  );
  return {
    client,
    take() {
      const use = { requests, readUnits, writeUnits, unitsByOperation: byOperation };
      requests = {};
      readUnits = 0;
      writeUnits = 0;
      byOperation = {};
      return use;
    },
  };
}

/** Slots held per cluster (reconciles applying to it), and the peak of each. */
export class InFlight {
  private readonly now = new Map<string, number>();
  readonly peak = new Map<string, number>();

  change(cluster: string, by: 1 | -1): void {
    const n = (this.now.get(cluster) ?? 0) + by;
    this.now.set(cluster, n);
    if (by > 0) this.peak.set(cluster, Math.max(this.peak.get(cluster) ?? 0, n));
  }

  resetPeaks(): void {
    this.peak.clear();
  }
}

/**
 * The most requests an API server had in flight at once, from its audit log (each line has when
 * the request arrived and when its response completed).
 */
export function peakInFlightRequests(lines: readonly string[]): number {
  const edges: [number, number][] = [];
  for (const line of lines) {
    if (!line) continue;
    const event = JSON.parse(line) as {
      requestReceivedTimestamp: string;
      stageTimestamp: string;
      stage: string;
    };
    if (event.stage !== 'ResponseComplete') continue;
    edges.push([micros(event.requestReceivedTimestamp), 1], [micros(event.stageTimestamp), -1]);
  }
  edges.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let open = 0;
  let peak = 0;
  for (const [, change] of edges) peak = Math.max(peak, (open += change));
  return peak;
}

/** `2026-11-25T00:38:02.986123Z` → microseconds since the epoch. */
function micros(timestamp: string): number {
  const fraction = /\.(\d+)Z$/.exec(timestamp)?.[1] ?? '0';
  return Date.parse(timestamp.replace(/\.\d+Z$/, 'Z')) * 1000 + Number(fraction.padEnd(6, '0').slice(0, 6));
}
