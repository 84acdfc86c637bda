import { createRequire } from 'node:module';
import { DynamoError } from './dynamodb-transactions.ts';

// dynalite ships no type declarations; createRequire keeps the casts in this file. Its engine (the
// request validations, the actions and the LevelDB store) is used in this process, without its HTTP server:
// the front in dynamodb.ts is the one server the SDK clients reach, so a request crosses one socket, not two.
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
export const DYNAMODB_ACTIONS = [
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

/**
 * dynalite's engine without its HTTP server: a request is validated and run exactly as its server would
 * (checkTypes, checkValidations, the action), and its error bodies are dynalite's. An ACTIVE table's
 * description is kept in memory (dynalite reads it from LevelDB on every request); any write of a table
 * description (create, update, delete, and their delayed status changes) drops what is kept.
 */
export function dynaliteEngine(dataDir: string | undefined) {
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
