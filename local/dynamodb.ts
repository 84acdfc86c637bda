import { mkdir } from 'node:fs/promises';
import http from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import type { CreateTableCommandInput } from '@aws-sdk/client-dynamodb';
import { readText, sendAwsJson } from './aws-json.ts';
import { type Authorizer, accessDeniedJson, accessKeyOf, dynamodbRequests } from './iam.ts';

// dynalite ships no type declarations; createRequire keeps the casts in this file. Its engine (the
// request validations, the actions and the LevelDB store) is used in this process, without its HTTP server:
// the front below is the one server the SDK clients reach, so a request crosses one socket, not two.
const requireDynalite = createRequire(import.meta.url);
type Callback = (
  err: (Error & { statusCode?: number; body?: DynamoError['body'] }) | null,
  out?: unknown,
) => void;
interface DynaliteStore {
  getTable(name: string, checkStatus: unknown, cb?: Callback): void;
  tableDb: { put(key: string, value: unknown, cb: Callback): void; del(key: string, cb: Callback): void };
  db: { close(cb: (err?: Error) => void): void };
  lifecycleManager?: { gracefulClose(cb: (err?: Error) => void): void };
}
const dynaliteDb = requireDynalite('dynalite/db') as {
  create(options: {
    path?: string;
    createTableMs: number;
    updateTableMs: number;
    deleteTableMs: number;
  }): DynaliteStore;
};
const dynaliteValidations = requireDynalite('dynalite/validations') as {
  checkTypes(data: unknown, types: object): Record<string, unknown>;
  checkValidations(data: unknown, types: object, custom: unknown, store: DynaliteStore): void;
};
// dynalite's list (index.js): what its server accepts.
const DYNAMODB_ACTIONS = [
  'BatchGetItem',
  'BatchWriteItem',
  'CreateTable',
  'DeleteItem',
  'DeleteTable',
  'DescribeTable',
  'DescribeTimeToLive',
  'GetItem',
  'ListTables',
  'PutItem',
  'Query',
  'Scan',
  'TagResource',
  'UntagResource',
  'ListTagsOfResource',
  'UpdateItem',
  'UpdateTable',
];
const TABLE_OPERATIONS = new Set(['CreateTable', 'DeleteTable', 'UpdateTable']);
/** dynalite's own request size limit. */
const MAX_REQUEST_BYTES = 16 * 1024 * 1024;

const TARGET = 'DynamoDB_20120810.';
const API_VERSIONS = ['DynamoDB_20111205', 'DynamoDB_20120810'];
const MAX_TRANSACT_ITEMS = 100;
/** DynamoDB's item size limit (400 KB), measured as dynalite measures it for PutItem. */
const MAX_ITEM_BYTES = 400 * 1024;
const itemSize = requireDynalite('dynalite/db').itemSize as (item: unknown) => number;

type Item = Record<string, unknown>; // DynamoDB wire format, passed through untouched
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

class DynamoError extends Error {
  constructor(
    readonly status: number,
    readonly body: { __type: string; message?: string; Message?: string; CancellationReasons?: Reason[] },
  ) {
    super(body.message ?? body.Message ?? body.__type);
  }
}

const validation = (message: string) =>
  new DynamoError(400, { __type: 'com.amazon.coral.validate#ValidationException', message });

/**
 * dynalite's engine without its HTTP server: a request is validated and run exactly as its server would
 * (checkTypes, checkValidations, the action), and its error bodies are dynalite's. An ACTIVE table's
 * description is kept in memory (dynalite reads it from LevelDB on every request); any write of a table
 * description (create, update, delete, and their delayed status changes) drops what is kept.
 */
function dynaliteEngine(dataDir: string | undefined) {
  // 0 ms: tables go ACTIVE on the next tick instead of after dynalite's 500 ms default.
  const store = dynaliteDb.create({ path: dataDir, createTableMs: 0, updateTableMs: 0, deleteTableMs: 0 });
  const actions = new Map(
    DYNAMODB_ACTIONS.map((op) => {
      const name = op[0]!.toLowerCase() + op.slice(1);
      return [
        op,
        {
          run: requireDynalite(`dynalite/actions/${name}`) as (
            store: DynaliteStore,
            data: unknown,
            cb: Callback,
          ) => void,
          validation: requireDynalite(`dynalite/validations/${name}`) as { types: object; custom?: unknown },
        },
      ];
    }),
  );

  const tables = new Map<string, unknown>();
  let generation = 0;
  const forget = () => {
    generation++;
    tables.clear();
  };
  const { put, del } = store.tableDb;
  store.tableDb.put = (key, value, cb) => {
    forget();
    put.call(store.tableDb, key, value, cb);
  };
  store.tableDb.del = (key, cb) => {
    forget();
    del.call(store.tableDb, key, cb);
  };
  const readTable = store.getTable.bind(store);
  // Item actions pass a callback as checkStatus (CREATING and DELETING tables are not found); table
  // actions pass false and read LevelDB every time.
  store.getTable = (name, checkStatus, cb) => {
    const done = (cb ?? checkStatus) as Callback;
    if (typeof checkStatus === 'function' || checkStatus === true) {
      const known = tables.get(name);
      if (known) return queueMicrotask(() => done(null, known));
      const at = generation;
      return readTable(name, true, (err, table) => {
        if (!err && at === generation && (table as { TableStatus?: string }).TableStatus === 'ACTIVE')
          tables.set(name, table);
        done(err, table);
      });
    }
    readTable(name, checkStatus, done);
  };

  return {
    /** One request, already parsed: its answer, or a DynamoError with dynalite's status and body. */
    dispatch(op: string, data: unknown): Promise<Record<string, unknown>> {
      const action = actions.get(op);
      if (!action)
        return Promise.reject(
          new DynamoError(400, { __type: 'com.amazon.coral.service#UnknownOperationException' }),
        );
      return new Promise((resolve, reject) => {
        const settle: Callback = (err, out) => {
          if (!err) resolve(out as Record<string, unknown>);
          else reject(err.statusCode && err.body ? new DynamoError(err.statusCode, err.body) : err);
        };
        try {
          const checked = dynaliteValidations.checkTypes(data, action.validation.types);
          dynaliteValidations.checkValidations(
            checked,
            action.validation.types,
            action.validation.custom,
            store,
          );
          if (TABLE_OPERATIONS.has(op)) forget();
          action.run(store, checked, settle);
        } catch (err) {
          settle(err as Error);
        }
      });
    },
    close(): Promise<void> {
      return new Promise((resolve, reject) => {
        const closed = (err?: Error) => (err ? reject(err) : resolve());
        if (store.lifecycleManager) store.lifecycleManager.gracefulClose(closed);
        else store.db.close(closed);
      });
    },
  };
}

/**
 * dynalite's engine in this process behind one loopback server that speaks DynamoDB's JSON protocol to the
 * SDK clients and adds TransactWriteItems and TransactGetItems.
 */
export async function startLocalDynamo(opts: {
  dataDir?: string;
  tables: CreateTableCommandInput[];
  /**
   * The share (0..1) of write transactions that DynamoDB cancels with `TransactionConflict` when they
   * touch an item another transaction holds (LOCAL_DYNAMODB_TRANSACTION_CONFLICTS); the others wait for
   * it. Default 0: every such transaction waits its turn.
   */
  transactionConflicts?: number;
  /** IAM enforced (local/iam.ts): absent, every signed request is allowed. */
  authorize?: Authorizer;
}): Promise<{ endpoint: string; close(): Promise<void> }> {
  const conflicts = opts.transactionConflicts ?? 0;
  if (!(conflicts >= 0 && conflicts <= 1))
    throw new RangeError('transactionConflicts must be between 0 and 1');
  if (opts.dataDir) await mkdir(opts.dataDir, { recursive: true });
  const engine = dynaliteEngine(opts.dataDir);

  /** A request from inside a transaction: a copy of its body, as a request over the wire would be. */
  const call = <T = Record<string, unknown>>(op: string, body: object): Promise<T> =>
    engine.dispatch(op, JSON.parse(JSON.stringify(body))) as Promise<T>;

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

  const transactions: Record<string, (body: never) => Promise<object>> = {
    TransactWriteItems: transactWrite,
    TransactGetItems: transactGet,
  };
  /** What dynalite's server checks before its engine runs a request. */
  async function answer(req: http.IncomingMessage, text: string): Promise<object> {
    const [api, op = ''] = String(req.headers['x-amz-target'] ?? '').split('.');
    const transaction = api === TARGET.slice(0, -1) ? transactions[op] : undefined;
    if (!transaction && (!API_VERSIONS.includes(api ?? '') || !DYNAMODB_ACTIONS.includes(op)))
      throw new DynamoError(400, { __type: 'com.amazon.coral.service#UnknownOperationException' });
    if (!String(req.headers.authorization ?? '').startsWith('AWS4-')) {
      throw new DynamoError(400, {
        __type: 'com.amazon.coral.service#MissingAuthenticationTokenException',
        message: 'Request is missing Authentication Token',
      });
    }
    const data = text ? JSON.parse(text) : undefined;
    if (data === undefined || data === null || typeof data !== 'object')
      throw new DynamoError(400, { __type: 'com.amazon.coral.service#SerializationException' });
    const denial = await opts.authorize?.(
      accessKeyOf(req.headers.authorization, req.url ?? '/'),
      dynamodbRequests(op, data),
    );
    if (denial) throw new DynamoError(400, accessDeniedJson(denial));
    return transaction ? transaction(data as never) : engine.dispatch(op, data);
  }

  const front = http.createServer((req, res) => {
    if (declaredLength(req) > MAX_REQUEST_BYTES) {
      req.resume();
      res.writeHead(413).end();
      return;
    }
    readText(req)
      .then((text) => answer(req, text))
      .then(
        (out) => sendAwsJson(res, 200, out),
        (err: unknown) =>
          err instanceof DynamoError
            ? sendAwsJson(res, err.status, err.body)
            : sendAwsJson(res, err instanceof SyntaxError ? 400 : 500, {
                __type: `com.amazon.coral.service#${err instanceof SyntaxError ? 'SerializationException' : 'InternalFailure'}`,
                message: String(err),
              }),
      );
  });
  const endpoint = `http://127.0.0.1:${await listen(front)}`;

  async function close() {
    const closed = new Promise<void>((resolve) => front.close(() => resolve()));
    front.closeIdleConnections();
    await closed;
    await engine.close();
  }

  try {
    for (const table of opts.tables) {
      const existed = await call('CreateTable', table).then(
        () => false,
        (err: unknown) => {
          // Already there from an earlier run with the same dataDir.
          if (!(err instanceof DynamoError && err.body.__type.endsWith('#ResourceInUseException'))) throw err;
          return true;
        },
      );
      await tableActive(table.TableName!);
      if (existed) await addMissingIndexes(table);
    }
  } catch (err) {
    await close(); // a bad table definition must not leave two servers listening
    throw err;
  }
  return { endpoint, close };

  function tableActive(name: string): Promise<void> {
    return untilActive(() => call<{ Table: { TableStatus: string } }>('DescribeTable', { TableName: name }));
  }

  /**
   * A table kept from an earlier run that lacks an index the template now declares gets it, as
   * CloudFormation adds an index to a deployed table. dynalite cannot add an index to a table, so the
   * table is recreated with the template's definition and its items are written back (local data is small).
   */
  async function addMissingIndexes(table: CreateTableCommandInput): Promise<void> {
    const { Table } = await call<{ Table: { GlobalSecondaryIndexes?: { IndexName: string }[] } }>(
      'DescribeTable',
      { TableName: table.TableName },
    );
    const present = new Set((Table.GlobalSecondaryIndexes ?? []).map((index) => index.IndexName));
    if ((table.GlobalSecondaryIndexes ?? []).every((index) => present.has(index.IndexName!))) return;
    const items: Record<string, unknown>[] = [];
    let start: unknown;
    do {
      const page = await call<{ Items?: Record<string, unknown>[]; LastEvaluatedKey?: unknown }>('Scan', {
        TableName: table.TableName,
        ...(start ? { ExclusiveStartKey: start } : {}),
      });
      items.push(...(page.Items ?? []));
      start = page.LastEvaluatedKey;
    } while (start);
    await call('DeleteTable', { TableName: table.TableName });
    // The table leaves on dynalite's next tick; until then a CreateTable of the same name is refused.
    for (;;) {
      const gone = await call('DescribeTable', { TableName: table.TableName }).then(
        () => false,
        (err: unknown) => {
          if (err instanceof DynamoError && err.body.__type.endsWith('#ResourceNotFoundException'))
            return true;
          throw err;
        },
      );
      if (gone) break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await call('CreateTable', table);
    await tableActive(table.TableName!);
    for (const item of items) await call('PutItem', { TableName: table.TableName, Item: item });
  }

  function checkCount(n: number) {
    if (n < 1 || n > MAX_TRANSACT_ITEMS) {
      const bound = n < 1 ? 'greater than or equal to 1' : `less than or equal to ${MAX_TRANSACT_ITEMS}`;
      throw validation(
        `1 validation error detected: Value at 'transactItems' failed to satisfy constraint: Member must have length ${bound}`,
      );
    }
  }
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

async function untilActive(describe: () => Promise<{ Table: { TableStatus: string } }>): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    if ((await describe()).Table.TableStatus === 'ACTIVE') return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error('local DynamoDB table did not become ACTIVE');
}

function declaredLength(req: http.IncomingMessage): number {
  const value = Number(req.headers['content-length']);
  return Number.isFinite(value) ? value : 0;
}

async function listen(server: http.Server): Promise<number> {
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}
