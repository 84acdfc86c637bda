import { mkdir } from 'node:fs/promises';
import http from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import type { CreateTableCommandInput } from '@aws-sdk/client-dynamodb';
import { readText, sendAwsJson } from './aws-json.ts';

// dynalite ships no type declarations; createRequire keeps the cast in this file.
const dynalite = createRequire(import.meta.url)('dynalite') as (options: {
  path?: string;
  createTableMs: number;
  updateTableMs: number;
  deleteTableMs: number;
}) => http.Server;

const TARGET = 'DynamoDB_20120810.';
const MAX_TRANSACT_ITEMS = 100;

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

/** Starts dynalite on loopback behind a front that adds TransactWriteItems and TransactGetItems. */
export async function startLocalDynamo(opts: {
  dataDir?: string;
  tables: CreateTableCommandInput[];
}): Promise<{ endpoint: string; close(): Promise<void> }> {
  if (opts.dataDir) await mkdir(opts.dataDir, { recursive: true });
  // 0 ms: tables go ACTIVE on the next tick instead of after dynalite's 500 ms default.
  const backend = dynalite({ path: opts.dataDir, createTableMs: 0, updateTableMs: 0, deleteTableMs: 0 });
  const backendPort = await listen(backend);
  const agent = new http.Agent({ keepAlive: true });

  async function call<T = Record<string, unknown>>(op: string, body: object): Promise<T> {
    const payload = JSON.stringify(body);
    return new Promise((resolve, reject) => {
      const req = http.request(
        {
          host: '127.0.0.1',
          port: backendPort,
          method: 'POST',
          agent,
          headers: {
            'content-type': 'application/x-amz-json-1.0',
            'x-amz-target': TARGET + op,
            'x-amz-date': '20200101T000000Z',
            // dynalite checks that a SigV4 header is present, never the signature itself.
            authorization:
              'AWS4-HMAC-SHA256 Credential=local/20200101/local/dynamodb/aws4_request, SignedHeaders=host, Signature=0',
            'content-length': Buffer.byteLength(payload),
          },
        },
        (res) => {
          readText(res).then((text) => {
            const parsed = JSON.parse(text || '{}');
            if (res.statusCode === 200) resolve(parsed as T);
            else reject(new DynamoError(res.statusCode ?? 500, parsed));
          }, reject);
        },
      );
      req.on('error', reject).end(payload);
    });
  }

  // One queue for every transaction: simple, and real isolation between transactions.
  let tail: Promise<unknown> = Promise.resolve();
  const serialise = <T>(fn: () => Promise<T>): Promise<T> => {
    const run = tail.then(fn, fn);
    tail = run.catch(() => undefined);
    return run;
  };

  async function keyNamesOf(table: string): Promise<string[]> {
    const { Table } = await call<{ Table: { KeySchema: { AttributeName: string }[] } }>('DescribeTable', {
      TableName: table,
    });
    return Table.KeySchema.map((k) => k.AttributeName);
  }

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
    const ids = new Set(ops.map((op) => `${op.spec.TableName}\u0000${JSON.stringify(op.key)}`));
    if (ids.size !== ops.length)
      throw validation('Transaction request cannot include multiple operations on one item');

    return serialise(async () => {
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
      throw new DynamoError(400, {
        __type: 'com.amazonaws.dynamodb.v20120810#TransactionCanceledException',
        Message: `Transaction cancelled, please refer cancellation reasons for specific reasons [${reasons.map((r) => r.Code).join(', ')}]`,
        CancellationReasons: reasons,
      });
    });
  }

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
    const found = await serialise(() =>
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

  const front = http.createServer((req, res) => {
    const target = String(req.headers['x-amz-target'] ?? '');
    const local = {
      [`${TARGET}TransactWriteItems`]: transactWrite,
      [`${TARGET}TransactGetItems`]: transactGet,
    }[target];
    if (!local) return forward(req, res, backendPort, agent);
    readText(req)
      .then((text) => local(JSON.parse(text)))
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
    await new Promise<void>((resolve) => front.close(() => resolve()));
    agent.destroy();
    await new Promise<void>((resolve, reject) =>
      backend.close((err?: Error) => (err ? reject(err) : resolve())),
    );
  }

  try {
    for (const table of opts.tables) {
      await call('CreateTable', table).catch((err: unknown) => {
        // Already there from an earlier run with the same dataDir.
        if (!(err instanceof DynamoError && err.body.__type.endsWith('#ResourceInUseException'))) throw err;
      });
      await untilActive(() =>
        call<{ Table: { TableStatus: string } }>('DescribeTable', { TableName: table.TableName }),
      );
    }
  } catch (err) {
    await close(); // a bad table definition must not leave two servers listening
    throw err;
  }
  return { endpoint, close };

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

function forward(req: http.IncomingMessage, res: http.ServerResponse, port: number, agent: http.Agent) {
  const upstream = http.request(
    { host: '127.0.0.1', port, method: req.method, path: req.url, headers: req.headers, agent },
    (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    },
  );
  upstream.on('error', (err) =>
    sendAwsJson(res, 502, { __type: 'com.amazon.coral.service#InternalFailure', message: String(err) }),
  );
  req.pipe(upstream);
}

async function listen(server: http.Server): Promise<number> {
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}
