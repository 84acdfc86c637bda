import type { DynamoItem, DynamoWrite, Observer } from './observe.ts';

/**
 * A request run as it would be, with what a counter needs: the items it writes, read before and after
 * (one request at a time is what a trace runs, so nothing else moves them in between), and the read
 * capacity the engine reports, asked for when the client did not ask and then left out of its answer.
 */
export async function observedRequest(
  observe: Observer,
  request: { caller: string | undefined; op: string; data: Record<string, unknown> },
  run: (body: Record<string, unknown>) => Promise<object>,
  store: {
    keyNames: (table: string) => string[];
    readItem: (table: string, key: DynamoItem) => Promise<DynamoItem | null>;
  },
): Promise<object> {
  const { caller, op, data } = request;
  const targets = writeTargets(op, data, store.keyNames);
  const before = await Promise.all(targets.map((target) => store.readItem(target.table, target.key)));
  const asked = data.ReturnConsumedCapacity;
  const reads = READ_OPERATIONS.has(op);
  let out: Record<string, unknown> | undefined;
  try {
    out = (await run(reads && !asked ? { ...data, ReturnConsumedCapacity: 'TOTAL' } : data)) as Record<
      string,
      unknown
    >;
    if (reads && !asked) {
      const { ConsumedCapacity: _left, ...answer } = out;
      return answer;
    }
    return out;
  } finally {
    const after = await Promise.all(targets.map((target) => store.readItem(target.table, target.key)));
    const writes: DynamoWrite[] = targets.map((target, i) => ({
      table: target.table,
      before: before[i]!,
      after: after[i]!,
      ...(target.checkOnly ? { checkOnly: true } : {}),
    }));
    observe({
      service: 'dynamodb',
      caller,
      operation: op,
      ok: out !== undefined,
      readUnits: reads && out ? consumedUnits(out.ConsumedCapacity) : 0,
      writes,
    });
  }
}

const READ_OPERATIONS = new Set(['GetItem', 'BatchGetItem', 'Query', 'Scan', 'TransactGetItems']);

const consumedUnits = (capacity: unknown): number =>
  (Array.isArray(capacity) ? capacity : capacity ? [capacity] : []).reduce(
    (sum: number, entry: { CapacityUnits?: number }) => sum + (entry.CapacityUnits ?? 0),
    0,
  );

/** The items a write request addresses, by table and key (a put's key taken from its item). */
function writeTargets(
  op: string,
  data: Record<string, unknown>,
  keyNamesOf: (table: string) => string[],
): Array<{ table: string; key: DynamoItem; checkOnly?: boolean }> {
  const keyOf = (table: string, item: DynamoItem) =>
    Object.fromEntries(keyNamesOf(table).map((name) => [name, item[name]]));
  type Spec = { TableName: string; Item?: DynamoItem; Key?: DynamoItem };
  const target = (spec: Spec) => ({
    table: spec.TableName,
    key: spec.Key ?? keyOf(spec.TableName, spec.Item ?? {}),
  });
  switch (op) {
    case 'PutItem':
    case 'UpdateItem':
    case 'DeleteItem':
      return [target(data as unknown as Spec)];
    case 'BatchWriteItem':
      return Object.entries(
        (data.RequestItems ?? {}) as Record<
          string,
          Array<{ PutRequest?: { Item: DynamoItem }; DeleteRequest?: { Key: DynamoItem } }>
        >,
      ).flatMap(([table, requests]) =>
        requests.map((request) =>
          target({ TableName: table, Item: request.PutRequest?.Item, Key: request.DeleteRequest?.Key }),
        ),
      );
    case 'TransactWriteItems':
      return ((data.TransactItems ?? []) as Array<Record<string, Spec>>).flatMap((item) =>
        Object.entries(item).map(([kind, spec]) => ({
          ...target(spec),
          ...(kind === 'ConditionCheck' ? { checkOnly: true } : {}),
        })),
      );
    default:
      return [];
  }
}
