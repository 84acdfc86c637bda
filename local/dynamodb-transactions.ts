/**
 * TransactWriteItems and TransactGetItems over dynalite's engine, which has neither: each transaction
 * holds every item it touches, evaluates every condition as DynamoDB does, and rolls back what it applied
 * when one fails. ./dynamodb.ts routes the two actions here.
 */
import { createRequire } from 'node:module';

const requireDynalite = createRequire(import.meta.url);

const MAX_TRANSACT_ITEMS = 100;
const PLAIN_WRITES = new Set(['PutItem', 'UpdateItem', 'DeleteItem']);
/** DynamoDB's item size limit (400 KB), measured as dynalite measures it for PutItem. */
const MAX_ITEM_BYTES = 400 * 1024;
const itemSize = requireDynalite('dynalite/db').itemSize as (item: unknown) => number;

export type Item = Record<string, unknown>; // DynamoDB wire format, passed through untouched
type Condition = {
  TableName: string;
  ConditionExpression?: string;
  ExpressionAttributeNames?: Record<string, string>;
  ExpressionAttributeValues?: Item;
  ReturnValuesOnConditionCheckFailure?: string;
};
type TransactWriteItem = {
  Put?: Condition & { Item: Item };
  Update?: Condition & { Key: Item; UpdateExpression: string };
  Delete?: Condition & { Key: Item };
  ConditionCheck?: Condition & { Key: Item };
};
type Spec = Condition & { Key?: Item; Item?: Item; UpdateExpression?: string };
type Op = { kind: keyof TransactWriteItem; spec: Spec; key: Item; keyNames: string[] };
type Reason = { Code: string; Message?: string; Item?: Item };

export class DynamoError extends Error {
  constructor(
    readonly status: number,
    readonly body: { __type: string; message?: string; Message?: string; CancellationReasons?: Reason[] },
  ) {
    super(body.message ?? body.Message ?? body.__type);
  }
}

const validation = (message: string) =>
  new DynamoError(400, { __type: 'com.amazon.coral.validate#ValidationException', message });

/** Runs one action on the engine: what a transaction's steps go through. */
export type EngineCall = <T = Record<string, unknown>>(op: string, body: object) => Promise<T>;

/**
 * The two transaction actions over `call`. `conflicts` is the share (0..1) of write transactions that
 * are cancelled with `TransactionConflict` when they touch an item another transaction holds.
 */
export function localTransactions(call: EngineCall, conflicts: number) {
  // Transactions that share an item run one after the other, in the order they came; the others run
  // side by side. Each takes every item it touches at once, so none waits on another in a circle.
  const held = new Map<string, Promise<void>>();
  const exclusive = <T>(ids: string[], fn: () => Promise<T>): Promise<T> => {
    const waits = ids.flatMap((id) => held.get(id) ?? []);
    const run = (waits.length ? Promise.all(waits) : Promise.resolve()).then(fn);
    const done = run.then(
      () => undefined,
      () => undefined,
    );
    for (const id of ids) held.set(id, done);
    void done.then(() => {
      for (const id of ids) if (held.get(id) === done) held.delete(id);
    });
    return run;
  };

  // A table's key schema never changes (DynamoDB cannot alter it): read once per table.
  const keyNames = new Map<string, Promise<string[]>>();
  function keyNamesOf(table: string): Promise<string[]> {
    let names = keyNames.get(table);
    if (!names) {
      names = call<{ Table: { KeySchema: { AttributeName: string }[] } }>('DescribeTable', {
        TableName: table,
      }).then(({ Table }) => Table.KeySchema.map((k) => k.AttributeName));
      keyNames.set(table, names);
      names.catch(() => keyNames.delete(table));
    }
    return names;
  }
  /** The same for every spelling of one key: attributes in name order. */
  const itemId = (table: string, key: Item) =>
    `${table}\u0000${JSON.stringify(Object.entries(key).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))}`;

  async function toOp(item: TransactWriteItem): Promise<Op> {
    const kinds = (['Put', 'Update', 'Delete', 'ConditionCheck'] as const).filter((k) => item[k]);
    const kind = kinds[0];
    if (kinds.length !== 1 || !kind)
      throw validation('TransactItems can only contain one of Check, Put, Update or Delete');
    const spec: Spec = item[kind] ?? { TableName: '' };
    const keyNames = await keyNamesOf(spec.TableName);
    const source = spec.Key ?? spec.Item ?? {};
    return { kind, spec, keyNames, key: Object.fromEntries(keyNames.map((n) => [n, source[n]])) };
  }

  const conditionOf = (s: Condition) => ({
    ConditionExpression: s.ConditionExpression,
    ExpressionAttributeNames: s.ExpressionAttributeNames,
    ExpressionAttributeValues: s.ExpressionAttributeValues,
  });

  /** Evaluates an op's condition against its item without changing anything anyone can see. */
  async function holds(op: Op, before: Item | undefined): Promise<boolean> {
    const expr = op.spec.ConditionExpression;
    if (!expr) return true;
    // Only what the condition uses: dynalite, like AWS, rejects names and values left unused,
    // such as an Update's placeholders that appear only in its UpdateExpression.
    const used = new Set(expr.match(/[#:]\w+/g));
    const only = <T>(map: Record<string, T> = {}) => {
      const kept = Object.entries(map).filter(([k]) => used.has(k));
      return kept.length ? Object.fromEntries(kept) : undefined;
    };
    const probe = {
      TableName: op.spec.TableName,
      Key: op.key,
      ExpressionAttributeNames: { ...only(op.spec.ExpressionAttributeNames), '#txnKey': op.keyNames[0] },
      ExpressionAttributeValues: only(op.spec.ExpressionAttributeValues),
    };
    // Existing item: an UpdateItem with no updates rewrites identical content. Missing item:
    // deleting a missing item is a no-op. The exists/not-exists guard keeps either probe harmless.
    return before
      ? succeeded(
          call('UpdateItem', { ...probe, ConditionExpression: `attribute_exists(#txnKey) AND (${expr})` }),
        )
      : succeeded(
          call('DeleteItem', {
            ...probe,
            ConditionExpression: `attribute_not_exists(#txnKey) AND (${expr})`,
          }),
        );
  }

  async function apply(op: Op, before: Item | undefined): Promise<boolean> {
    const { spec } = op;
    const base = { TableName: spec.TableName, ...conditionOf(spec) };
    if (op.kind === 'Put') return succeeded(call('PutItem', { ...base, Item: spec.Item }));
    if (op.kind === 'Delete') return succeeded(call('DeleteItem', { ...base, Key: op.key }));
    if (op.kind === 'Update') {
      return succeeded(call('UpdateItem', { ...base, Key: op.key, UpdateExpression: spec.UpdateExpression }));
    }
    return holds(op, before);
  }

  async function transactWrite(body: { TransactItems?: TransactWriteItem[] }): Promise<object> {
    const items = body.TransactItems ?? [];
    checkCount(items.length);
    const ops = await Promise.all(items.map(toOp));
    const ids = new Set(ops.map((op) => itemId(op.spec.TableName, op.key)));
    if (ids.size !== ops.length)
      throw validation('Transaction request cannot include multiple operations on one item');
    for (const op of ops) {
      if (op.kind === 'Put' && itemSize(op.spec.Item) > MAX_ITEM_BYTES)
        throw validation('Item size has exceeded the maximum allowed size');
    }
    // A transaction holds its items from its start to its end. One that arrives meanwhile is cancelled as
    // DynamoDB cancels it, for the configured share; the rest wait their turn.
    if (conflicts > 0 && [...ids].some((id) => held.has(id)) && Math.random() < conflicts) {
      const reasons = ops.map(
        (op): Reason =>
          held.has(itemId(op.spec.TableName, op.key))
            ? { Code: 'TransactionConflict', Message: 'Transaction is ongoing for the item' }
            : { Code: 'None' },
      );
      throw cancellation(reasons);
    }

    return exclusive([...ids], async () => {
      const before = await Promise.all(ops.map((op) => read(op.spec.TableName, op.key)));
      const reasons: Reason[] = ops.map(() => ({ Code: 'None' }));
      const applied: number[] = [];
      const rollback = async () => {
        for (const i of applied.reverse()) await restore(ops[i] as Op, before[i]);
      };
      let cancelled = false;
      try {
        for (const [i, op] of ops.entries()) {
          // After the first failure, only evaluate: AWS reports every failing condition.
          const ok = cancelled ? await holds(op, before[i]) : await apply(op, before[i]);
          if (ok && !cancelled && op.kind !== 'ConditionCheck') applied.push(i);
          if (ok) continue;
          cancelled = true;
          const old = op.spec.ReturnValuesOnConditionCheckFailure === 'ALL_OLD' ? before[i] : undefined;
          reasons[i] = {
            Code: 'ConditionalCheckFailed',
            Message: 'The conditional request failed',
            ...(old && { Item: old }),
          };
        }
      } catch (err) {
        await rollback(); // e.g. a ValidationException from dynalite on a later op
        throw err;
      }
      if (!cancelled) return {};
      await rollback();
      throw cancellation(reasons);
    });
  }

  const cancellation = (reasons: Reason[]) =>
    new DynamoError(400, {
      __type: 'com.amazonaws.dynamodb.v20120810#TransactionCanceledException',
      Message: `Transaction cancelled, please refer cancellation reasons for specific reasons [${reasons.map((r) => r.Code).join(', ')}]`,
      CancellationReasons: reasons,
    });

  async function read(table: string, key: Item, extra: object = {}): Promise<Item | undefined> {
    const { Item } = await call<{ Item?: Item }>('GetItem', {
      TableName: table,
      Key: key,
      ConsistentRead: true,
      ...extra,
    });
    return Item;
  }

  const restore = (op: Op, before: Item | undefined) =>
    before
      ? call('PutItem', { TableName: op.spec.TableName, Item: before })
      : call('DeleteItem', { TableName: op.spec.TableName, Key: op.key });

  async function transactGet(body: {
    TransactItems?: { Get: Condition & { Key: Item; ProjectionExpression?: string } }[];
  }) {
    const items = body.TransactItems ?? [];
    checkCount(items.length);
    const ids = new Set(items.map(({ Get: g }) => itemId(g?.TableName, g?.Key ?? {})));
    const found = await exclusive([...ids], () =>
      Promise.all(
        items.map(({ Get: g }) =>
          read(g.TableName, g.Key, {
            ProjectionExpression: g.ProjectionExpression,
            ExpressionAttributeNames: g.ExpressionAttributeNames,
          }),
        ),
      ),
    );
    return { Responses: found.map((Item) => (Item ? { Item } : {})) };
  }

  function checkCount(n: number) {
    if (n < 1 || n > MAX_TRANSACT_ITEMS) {
      const bound = n < 1 ? 'greater than or equal to 1' : `less than or equal to ${MAX_TRANSACT_ITEMS}`;
      throw validation(
        `1 validation error detected: Value at 'transactItems' failed to satisfy constraint: Member must have length ${bound}`,
      );
    }
  }

  /**
   * What a plain read waits for. DynamoDB isolates a transaction from reads: a GetItem is serializable
   * with it and a BatchGetItem, Query or Scan is read-committed, so neither sees a transaction half
   * applied or a write it later rolls back. Here a transaction applies its items one by one, so a plain
   * read waits for the transactions holding what it may read (a Query or Scan: any item of its table).
   */
  function settledFor(op: string, data: Record<string, unknown>): Promise<unknown> | undefined {
    if (held.size === 0) return undefined;
    let waits: Promise<void>[] = [];
    if (op === 'GetItem') {
      const hold = held.get(itemId(String(data.TableName), (data.Key ?? {}) as Item));
      if (hold) waits = [hold];
    } else if (op === 'BatchGetItem') {
      const requests = (data.RequestItems ?? {}) as Record<string, { Keys?: Item[] }>;
      waits = Object.entries(requests).flatMap(([table, { Keys = [] }]) =>
        Keys.flatMap((key) => held.get(itemId(table, key)) ?? []),
      );
    } else if (op === 'Query' || op === 'Scan') {
      const prefix = `${String(data.TableName)}\u0000`;
      waits = [...held].flatMap(([id, hold]) => (id.startsWith(prefix) ? [hold] : []));
    }
    return waits.length ? Promise.all(waits) : undefined;
  }

  /**
   * A plain write (PutItem, UpdateItem, DeleteItem) on an item a transaction holds: DynamoDB refuses it with
   * `TransactionConflictException`. Here it is refused for the configured share, as a second transaction
   * is, and otherwise waits, so it never lands between a transaction's steps or under its rollback.
   */
  async function admitPlainWrite(op: string, data: Record<string, unknown>): Promise<void> {
    if (held.size === 0 || !PLAIN_WRITES.has(op)) return;
    const table = String(data.TableName);
    const source = ((op === 'PutItem' ? data.Item : data.Key) ?? {}) as Item;
    const keyNames = await keyNamesOf(table).catch(() => Object.keys(source));
    const hold = held.get(itemId(table, Object.fromEntries(keyNames.map((n) => [n, source[n]]))));
    if (!hold) return;
    if (conflicts > 0 && Math.random() < conflicts) {
      throw new DynamoError(400, {
        __type: 'com.amazonaws.dynamodb.v20120810#TransactionConflictException',
        message: 'Transaction is ongoing for the item',
      });
    }
    await hold;
  }

  return { TransactWriteItems: transactWrite, TransactGetItems: transactGet, settledFor, admitPlainWrite };
}

async function succeeded(request: Promise<unknown>): Promise<boolean> {
  try {
    await request;
    return true;
  } catch (err) {
    if (err instanceof DynamoError && err.body.__type.endsWith('#ConditionalCheckFailedException'))
      return false;
    throw err;
  }
}
