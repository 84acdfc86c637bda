import http from 'node:http';
import { ScanCommand } from '@aws-sdk/client-dynamodb';
import fc from 'fast-check';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamodbAccounts } from '#aws/dynamodb-accounts.ts';
import { balanceFromLedger } from '#core/credits/ledger.ts';
import { LOCAL_TABLE } from '../../../local/stack.ts';
import { eventually } from '../../support/eventually.ts';
import { bySoak } from '../../support/soak.ts';
import { adminDynamo, type RunningServer, startServer, WITHOUT_MODELS } from '../support/local-server.ts';

/**
 * Random and mutated requests through the real `npm start`: methods, paths, ids, headers, credentials,
 * JSON, forms, multipart with images whose headers are broken. Whatever arrives, the answer is never a
 * 5xx (nothing is injected here), every refusal is the spec's error body, the process stays up, and the
 * credit ledger still rebuilds every account's balance exactly.
 */
const BATCH = 20;
// × BATCH requests: 1,000 from a fixed seed by default, 5,000 from a new seed in the soak tier; FUZZ_RUNS and
// FUZZ_SEED override (a failure prints the seed that reproduces it).
const RUNS = Number(process.env.FUZZ_RUNS ?? bySoak(50, 250));
const SEED = process.env.FUZZ_SEED
  ? Number(process.env.FUZZ_SEED)
  : bySoak<number | undefined>(20261127, undefined);
const CONCURRENCY = 16;

interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
}

interface Outcome {
  request: FuzzRequest;
  status: number;
  body: string;
}

describe('fuzzing the local server', () => {
  let server: RunningServer;
  let keys: string[];
  let images: Record<string, Buffer>;

  beforeAll(async () => {
    server = await startServer({
      // The subject is the API's answers to hostile input: jobs run on the marker runner, not the models.
      ...WITHOUT_MODELS,
      // Throttling would answer most of this with 429 (allowed, but it would test little else).
      RATE_LIMIT_KEY_PER_SECOND: '100000',
      RATE_LIMIT_KEY_BURST: '100000',
      RATE_LIMIT_GUEST_PER_SECOND: '100000',
      RATE_LIMIT_GUEST_BURST: '100000',
      // Few credits and few guest sessions keep the jobs that run to a handful.
      GUEST_TRIAL_CREDITS: '3',
      GUEST_SESSIONS_PER_ADDRESS_PER_DAY: '3',
    });
    keys = [await server.createKey(12), await server.createKey(6)];
    const png = await sharp({ create: { width: 64, height: 48, channels: 3, background: '#7a8' } })
      .png()
      .toBuffer();
    const jpeg = await sharp({ create: { width: 96, height: 64, channels: 3, background: '#345' } })
      .jpeg()
      .toBuffer();
    const webp = await sharp({ create: { width: 80, height: 60, channels: 3, background: '#999' } })
      .webp()
      .toBuffer();
    const huge = Buffer.from(png);
    huge.writeUInt32BE(0x7fffffff, 16);
    const dot = await sharp({ create: { width: 1, height: 1, channels: 3, background: '#000' } })
      .png()
      .toBuffer();
    images = {
      png,
      jpeg,
      webp,
      huge,
      dot,
      truncated: jpeg.subarray(0, 40),
      magicOnly: Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 0x4a, 0x46]),
      gif: Buffer.from('GIF89a\x01\x00\x01\x00'),
    };
  });
  afterAll(async () => {
    await server?.stop();
  });

  it(`answers ${RUNS * BATCH} random requests without a 5xx, and the ledger still adds up`, {
    timeout: 600_000,
  }, async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
    const outcomes: Outcome[] = [];
    await fc.assert(
      fc.asyncProperty(
        fc.array(requestArbitrary(keys, images), { minLength: BATCH, maxLength: BATCH }),
        async (batch) => {
          const answers = await runAll(server, agent, batch);
          outcomes.push(...answers);
          for (const answer of answers) {
            const { method, path, headers, body } = answer.request;
            const sent = JSON.stringify({ headers, body: body?.toString('latin1').slice(0, 600) });
            const what = `${method} ${path} ${sent} -> ${answer.status} ${answer.body.slice(0, 300)}`;
            if (answer.status >= 500) throw new Error(`5xx: ${what}`);
            if (answer.status >= 400 && answer.request.method !== 'HEAD') {
              const body = JSON.parse(answer.body) as Record<string, unknown>;
              if (body.result !== false || body.code !== answer.status || typeof body.message !== 'string') {
                throw new Error(`not the error body: ${what}`);
              }
            }
          }
          return true;
        },
      ),
      { numRuns: RUNS, seed: SEED, endOnFailure: true },
    );
    agent.destroy();

    expect(outcomes.length).toBeGreaterThanOrEqual(RUNS * BATCH);
    const statuses = new Map<number, number>();
    for (const { status } of outcomes) statuses.set(status, (statuses.get(status) ?? 0) + 1);
    console.log('fuzz statuses', Object.fromEntries([...statuses].sort(([a], [b]) => a - b)));
    expect([...statuses.keys()].filter((status) => status >= 500)).toEqual([]);
    // Not everything was refused: some requests got through to real work.
    expect(statuses.get(202) ?? 0).toBeGreaterThan(0);

    const alive = await fetch(`${server.baseUrl}/quota`, { headers: { 'x-api-key': keys[0]! } });
    expect(alive.status).toBe(200);
    await expectLedgerToRebuildEveryBalance(server);
  });
});

const PATHS = [
  '/jobs',
  '/process',
  '/analyze',
  '/quota',
  '/webhook',
  '/files',
  '/assets',
  '/batches',
  '/openapi.json',
];

function requestArbitrary(keys: string[], images: Record<string, Buffer>): fc.Arbitrary<FuzzRequest> {
  const id = fc.oneof(
    fc.stringMatching(/^job_[0-9a-z]{24}$/),
    fc.constantFrom('%E0%A4%A', '%', '%%', '..', '%2e%2e', '%00', 'job_', '0', '-1', '99999999999999999999'),
    fc.string({ maxLength: 40 }).map(encodeURIComponent),
    fc.string({ unit: 'binary', maxLength: 20 }).map(encodeURIComponent),
    fc.integer({ min: 100, max: 3000 }).map((length) => 'x'.repeat(length)),
  );
  const path = fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...PATHS) },
    {
      weight: 4,
      arbitrary: fc
        .tuple(
          id,
          fc.constantFrom(
            '',
            '/cancel',
            '/retry',
            '/deliveries',
            '/deliveries/redeliver',
            '/download',
            '/pause',
          ),
          fc.constantFrom('/jobs/', '/batches/', '/files/', '/results/'),
        )
        .map(([value, tail, root]) => `${root}${value}${root === '/results/' ? '/result.jpg' : tail}`),
    },
    { weight: 1, arbitrary: fc.string({ maxLength: 30 }).map((text) => `/${encodeURIComponent(text)}`) },
  );
  const query = fc.oneof(
    fc.constant(''),
    fc
      .array(
        fc.tuple(
          fc.constantFrom('limit', 'before', 'status', 'api_key', 'partial', 'x'),
          fc.oneof(fc.string({ maxLength: 12 }), fc.integer().map(String)),
        ),
        { maxLength: 3 },
      )
      .map((pairs) => `?${new URLSearchParams(pairs).toString()}`),
    fc.constantFrom('?%', '?a=%E0%A4%A', '?limit=1&limit=2'),
  );
  const credentials = fc.oneof(
    fc.constant({}),
    ...keys.map((key) => fc.constant({ 'x-api-key': key })),
    ...keys.map((key) => fc.constant({ authorization: `Bearer ${key}` })),
    fc.constantFrom<Record<string, string>>(
      { 'x-api-key': 'pjk_garbage' },
      { 'x-api-key': '' },
      { authorization: 'Basic YTpi' },
      { authorization: 'Bearer' },
      { 'x-api-key': keys[0]!, authorization: `Bearer ${keys[1]}` },
      { cookie: 'pj_guest=abc.def' },
      { cookie: 'pj_guest=%%%; other=1' },
    ),
  );
  const fields = fc.dictionary(
    fc.oneof(
      fc.constantFrom(
        'mode',
        'url',
        'asset_id',
        'background',
        'plate_color',
        'plate_smoothing',
        'plate_mask_only',
        'webhook_url',
        'api_key',
      ),
      fc.string({ maxLength: 10 }),
    ),
    fc.oneof(
      fc.constantFrom('plate', 'analyze', 'background', 'studio', '#ffffff', 'true', 'raw', ''),
      fc.constantFrom('http://127.0.0.1:1/x.jpg', 'http://0x7f.1/', 'ftp://x', 'https://[::ffff:10.0.0.1]/'),
      fc.string({ maxLength: 30 }),
    ),
    { maxKeys: 5 },
  );
  const image = fc.oneof(
    fc.constantFrom(...Object.keys(images)).map((name) => images[name]!),
    fc
      .tuple(fc.constantFrom(images.png!, images.jpeg!, images.webp!), fc.nat(63), fc.nat(255))
      .map(([bytes, at, value]) => {
        const copy = Buffer.from(bytes);
        copy[at % copy.length] = value;
        return copy;
      }),
    fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes)),
  );
  const body = fc.oneof(
    fc.constant<[string | undefined, Buffer | undefined]>([undefined, undefined]),
    fields.map((value) => ['application/json', Buffer.from(JSON.stringify(value))] as [string, Buffer]),
    fc.json({ maxDepth: 12 }).map((text) => ['application/json', Buffer.from(text)] as [string, Buffer]),
    fc.string({ maxLength: 50 }).map((text) => ['application/json', Buffer.from(text)] as [string, Buffer]),
    fields.map(
      (value) =>
        ['application/x-www-form-urlencoded', Buffer.from(new URLSearchParams(value).toString())] as [
          string,
          Buffer,
        ],
    ),
    fc
      .tuple(
        fields,
        fc.array(fc.tuple(fc.constantFrom('file', 'background_file', 'archive', 'x'), image), {
          maxLength: 3,
        }),
        fc.string({ maxLength: 12 }),
      )
      .map(([value, files, filename]) => multipart(value, files, filename)),
    fc
      .tuple(
        fc.constantFrom('text/plain', 'application/octet-stream', 'multipart/form-data', 'image/png', ''),
        fc.uint8Array({ maxLength: 300 }),
      )
      .map(([type, bytes]) => [type, Buffer.from(bytes)] as [string, Buffer]),
  );
  // Requests close to a real job creation, so that some get through to real work (and the ledger moves).
  const job = fc
    .record({
      route: fc.constantFrom('/jobs', '/analyze', '/process'),
      mode: fc.constantFrom('analyze', 'plate', 'background_mask', 'studio_background'),
      credentials: fc.oneof(fc.constant({}), ...keys.map((key) => fc.constant({ 'x-api-key': key }))),
      image: fc.oneof(
        { weight: 3, arbitrary: fc.constantFrom(images.png!, images.jpeg!, images.webp!) },
        image,
      ),
      extra: fields,
    })
    .map(({ route, mode, credentials, image: bytes, extra }) => {
      const [type, body] = multipart({ ...extra, mode }, [['file', bytes]], 'car');
      return {
        method: 'POST',
        path: `/api/v1${route}`,
        headers: { ...credentials, 'content-type': type },
        body,
      } satisfies FuzzRequest;
    });
  const anything = fc
    .record({
      method: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'),
      path,
      query,
      credentials,
      body,
      idempotencyKey: fc.option(fc.string({ maxLength: 250 }), { nil: undefined }),
    })
    .map(({ method, path, query, credentials, body: [type, bytes], idempotencyKey }) => ({
      method,
      path: `/api/v1${path}${query}`,
      headers: {
        ...credentials,
        ...(type !== undefined ? { 'content-type': type } : {}),
        ...(idempotencyKey !== undefined ? { 'idempotency-key': encodeURIComponent(idempotencyKey) } : {}),
      },
      ...(bytes && method !== 'GET' && method !== 'HEAD' ? { body: bytes } : {}),
    }));
  return fc.oneof({ weight: 1, arbitrary: job }, { weight: 9, arbitrary: anything });
}

function multipart(
  fields: Record<string, string>,
  files: Array<[string, Buffer]>,
  filename: string,
): [string, Buffer] {
  const boundary = 'fuzzboundary';
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(fields)) {
    parts.push(
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`),
    );
  }
  for (const [name, bytes] of files) {
    parts.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${name}"; filename="${filename}.jpg"\r\nContent-Type: image/jpeg\r\n\r\n`,
      ),
      bytes,
      Buffer.from('\r\n'),
    );
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return [`multipart/form-data; boundary=${boundary}`, Buffer.concat(parts)];
}

async function runAll(server: RunningServer, agent: http.Agent, requests: FuzzRequest[]): Promise<Outcome[]> {
  const { hostname, port } = new URL(server.origin);
  return Promise.all(
    requests.map(
      (request) =>
        new Promise<Outcome>((resolve, reject) => {
          const req = http.request(
            {
              host: hostname,
              port,
              method: request.method,
              path: request.path,
              // A body always goes with its length: Node sends none for GET-like methods otherwise, and the
              // bytes would be read as the next request (bad HTTP, which the server answers by closing).
              headers: request.body
                ? { ...request.headers, 'content-length': String(request.body.length) }
                : request.headers,
              agent,
            },
            (res) => {
              const chunks: Buffer[] = [];
              res.on('data', (chunk: Buffer) => chunks.push(chunk));
              res.on('end', () =>
                resolve({
                  request,
                  status: res.statusCode ?? 0,
                  body: Buffer.concat(chunks).toString('utf8'),
                }),
              );
            },
          );
          req.on('error', (error) =>
            reject(new Error(`${request.method} ${request.path}: ${error.message}`)),
          );
          req.end(request.body);
        }),
    ),
  );
}

/** Every account in the table, keys and guest sessions alike, once no job of theirs holds a reservation. */
async function expectLedgerToRebuildEveryBalance(server: RunningServer) {
  const dynamodb = await adminDynamo(server);
  const accounts = dynamodbAccounts(dynamodb, LOCAL_TABLE);
  const ids: string[] = [];
  let ExclusiveStartKey: Record<string, import('@aws-sdk/client-dynamodb').AttributeValue> | undefined;
  do {
    const page = await dynamodb.send(
      new ScanCommand({
        TableName: LOCAL_TABLE,
        FilterExpression: 'sk = :sk',
        ExpressionAttributeValues: { ':sk': { S: 'ACCOUNT' } },
        ExclusiveStartKey,
      }),
    );
    for (const item of page.Items ?? []) ids.push(item.pk!.S!.replace(/^ACCOUNT#/, ''));
    ExclusiveStartKey = page.LastEvaluatedKey;
  } while (ExclusiveStartKey);
  expect(ids.length).toBeGreaterThanOrEqual(2);
  const deadline = Date.now() + 240_000;
  for (const id of ids) {
    await eventually(
      async () => (await accounts.get(id))!.reserved,
      (reserved) => reserved === 0,
      { timeoutMs: Math.max(0, deadline - Date.now()), intervalMs: 500 },
    );
    expect(balanceFromLedger(await accounts.ledger(id)), id).toEqual(await accounts.get(id));
  }
  dynamodb.destroy();
}
