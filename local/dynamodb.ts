import { mkdir } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CreateTableCommandInput } from '@aws-sdk/client-dynamodb';
import { readText, sendAwsJson } from './aws-json.ts';
import { DYNAMODB_ACTIONS, dynaliteEngine } from './dynamodb-engine.ts';
import { observedRequest } from './dynamodb-observed.ts';
import { DynamoError, localTransactions } from './dynamodb-transactions.ts';
import { type Authorizer, accessDeniedJson, accessKeyOf, dynamodbRequests } from './iam.ts';
import type { DynamoItem, Observer } from './observe.ts';

/** dynalite's own request size limit. */
const MAX_REQUEST_BYTES = 16 * 1024 * 1024;

const TARGET = 'DynamoDB_20120810.';
const API_VERSIONS = ['DynamoDB_20111205', 'DynamoDB_20120810'];

/**
 * dynalite's engine in this process behind one loopback server that speaks DynamoDB's JSON protocol to the
 * SDK clients and adds TransactWriteItems and TransactGetItems.
 */
export async function startLocalDynamo(opts: {
  dataDir?: string;
  tables: CreateTableCommandInput[];
  /**
   * The share (0..1) of write transactions that DynamoDB cancels with `TransactionConflict`, and of plain
   * writes it refuses with `TransactionConflictException`, when they touch an item another transaction
   * holds (LOCAL_DYNAMODB_TRANSACTION_CONFLICTS); the others wait for it. Default 0: every one waits its turn.
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

  const { settledFor, admitPlainWrite, ...transactions } = localTransactions(call, conflicts);
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
      await admitPlainWrite(op, body);
      return engine.dispatch(op, body);
    };
    return opts.observe
      ? observedRequest(opts.observe, { caller, op, data: data as Record<string, unknown> }, run, {
          keyNames: (table) => keyNames.get(table) ?? [],
          readItem,
        })
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
