import { mkdir } from 'node:fs/promises';
import http from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import type { CreateTableCommandInput } from '@aws-sdk/client-dynamodb';
import { readText, sendAwsJson } from './aws-json.ts';
import { DynamoError, localTransactions } from './dynamodb-transactions.ts';
import { type Authorizer, accessDeniedJson, accessKeyOf, dynamodbRequests } from './iam.ts';
import type { DynamoItem, DynamoWrite, Observer } from './observe.ts';

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
  /** Told of every item request answered, with the items it wrote (local/observe.ts). */
  observe?: Observer;
}): Promise<{ endpoint: string; close(): Promise<void> }> {
  const conflicts = opts.transactionConflicts ?? 0;
  if (!(conflicts >= 0 && conflicts <= 1))
    throw new RangeError('transactionConflicts must be between 0 and 1');
  if (opts.dataDir) await mkdir(opts.dataDir, { recursive: true });
  const engine = dynaliteEngine(opts.dataDir);

  /** A request from inside a transaction: a copy of its body, as a request over the wire would be. */
  const call = <T = Record<string, unknown>>(op: string, body: object): Promise<T> =>
    engine.dispatch(op, JSON.parse(JSON.stringify(body))) as Promise<T>;

  const { settledFor, ...transactions } = localTransactions(call, conflicts);
  /** What dynalite's server checks before its engine runs a request. */
  async function answer(req: http.IncomingMessage, text: string): Promise<object> {
    const [api, op = ''] = String(req.headers['x-amz-target'] ?? '').split('.');
    const transaction =
      api === TARGET.slice(0, -1) && Object.hasOwn(transactions, op)
        ? (transactions[op as keyof typeof transactions] as (body: never) => Promise<object>)
        : undefined;
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
    const caller = accessKeyOf(req.headers.authorization, req.url ?? '/');
    const denial = await opts.authorize?.(caller, dynamodbRequests(op, data));
    if (denial) throw new DynamoError(400, accessDeniedJson(denial));
    const run = async (body: Record<string, unknown>) => {
      if (transaction) return transaction(body as never);
      await settledFor(op, body);
      return engine.dispatch(op, body);
    };
    return opts.observe
      ? observed(opts.observe, caller, op, data as Record<string, unknown>, run)
      : run(data as Record<string, unknown>);
  }

  const keyNames = new Map(
    opts.tables.map((table) => [table.TableName!, table.KeySchema!.map((key) => key.AttributeName!)]),
  );
  // A request too malformed to name its item gets the engine's own error from `run`, not one from here.
  const readItem = (table: string, key: DynamoItem): Promise<DynamoItem | null> =>
    call<{ Item?: DynamoItem }>('GetItem', { TableName: table, Key: key, ConsistentRead: true }).then(
      (answer) => answer.Item ?? null,
      () => null,
    );

  /**
   * The request run as it would be, with what a counter needs: the items it writes, read before and after
   * (one request at a time is what a trace runs, so nothing else moves them in between), and the read
   * capacity the engine reports, asked for when the client did not ask and then left out of its answer.
   */
  async function observed(
    observe: Observer,
    caller: string | undefined,
    op: string,
    data: Record<string, unknown>,
    run: (body: Record<string, unknown>) => Promise<object>,
  ): Promise<object> {
    const targets = writeTargets(op, data, (table) => keyNames.get(table) ?? []);
    const before = await Promise.all(targets.map((target) => readItem(target.table, target.key)));
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
      const after = await Promise.all(targets.map((target) => readItem(target.table, target.key)));
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
