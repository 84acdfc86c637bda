import crypto from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Clock } from '#core/ports.ts';
import {
  ADMIN_ACCESS_KEY,
  type Authorizer,
  accessKeyOf,
  LOCAL_SECRET_KEY,
  missingKeyRequest,
  s3Requests,
  s3Target,
} from './iam.ts';
import { type Observer, s3Operation } from './observe.ts';
import { applyLifecycle, type LifecycleRule } from './s3-lifecycle.ts';

// s3rver ships no type declarations; only the members used here are described.
type S3rverInstance = {
  run(): Promise<AddressInfo>;
  close(): Promise<void>;
  httpServer?: http.Server;
  /** Koa's request listener, the one its own server uses. */
  callback(): http.RequestListener;
  store: { existsObject(bucket: string, key: string): Promise<boolean> };
};
const S3rver = createRequire(import.meta.url)('s3rver') as new (options: {
  address: string;
  port: number;
  silent: boolean;
  directory: string;
  configureBuckets: { name: string }[];
}) => S3rverInstance;

/** Starts s3rver on loopback; objects live under dataDir, or in a temporary folder removed on close. */
export async function startLocalS3(opts: {
  dataDir?: string;
  buckets: string[];
  /** IAM enforced (local/iam.ts): absent, every signed request is allowed. */
  iam?: LocalS3Iam;
  /** The bucket's expiration rules (local/s3-lifecycle.ts), applied by `clock`; default the machine's. */
  lifecycle?: { rules: readonly LifecycleRule[]; clock?: Clock };
  /** Told of every request that reaches the store, when its answer is sent (local/observe.ts). */
  observe?: Observer;
}): Promise<{ endpoint: string; close(): Promise<void> }> {
  allowSingleDesOnOpenSsl3();
  const directory = opts.dataDir ?? (await mkdtemp(join(tmpdir(), 'local-s3-')));
  await mkdir(directory, { recursive: true });
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory,
    configureBuckets: opts.buckets.map((name) => ({ name })),
  });
  applyLifecycle(
    server.store,
    opts.lifecycle?.rules ?? [],
    opts.lifecycle?.clock ?? { now: () => new Date() },
  );
  // s3rver checks header signatures itself, against the key pairs of its one account.
  const account = createRequire(import.meta.url)('s3rver/lib/models/account') as {
    DUMMY_ACCOUNT: { createKeyPair(accessKeyId: string, secret: string): void };
  };
  for (const accessKeyId of opts.iam?.accessKeyIds ?? []) {
    account.DUMMY_ACCOUNT.createKeyPair(accessKeyId, LOCAL_SECRET_KEY);
  }
  await server.run().catch(async (err: unknown) => {
    if (!opts.dataDir) await rm(directory, { recursive: true, force: true });
    throw err;
  });
  const store = server.callback();
  const observe = opts.observe;
  const observed: http.RequestListener = observe
    ? (req, res) => {
        const url = req.url ?? '/';
        res.once('finish', () =>
          observe({
            service: 's3',
            caller: accessKeyOf(req.headers.authorization, url),
            operation: s3Operation(req.method ?? 'GET', url, req.headers),
            key: s3Target(url).key,
            presigned: /[?&]X-Amz-Signature=/.test(url),
            requestBytes: Number(req.headers['content-length'] ?? 0) || 0,
            status: res.statusCode,
          }),
        );
        store(req, res);
      }
    : store;
  const front = await signatureCheckingFront(observed, opts.iam && { ...opts.iam, store: server.store });
  return {
    endpoint: front.endpoint,
    async close() {
      await front.close();
      const closed = server.close();
      server.httpServer?.closeIdleConnections();
      await closed;
      if (!opts.dataDir) await rm(directory, { recursive: true, force: true });
    },
  };
}

const PATCHED = Symbol.for('photo-jobs.local.s3.single-des');

/**
 * s3rver (lib/controllers/bucket.js, generateContinuationToken / decipherContinuationToken)
 * encrypts ListObjectsV2 continuation tokens with `crypto.createCipheriv('des', ...)`: single
 * DES-CBC, which OpenSSL 3 (Node >= 17) moved to the legacy provider, so every truncated
 * listing fails with ERR_OSSL_EVP_UNSUPPORTED ("digital envelope routines::unsupported").
 *
 * Triple DES in EDE mode with K1 = K2 = K3 is, by construction, single DES (encrypt, decrypt
 * and encrypt again with one key), and 'des-ede3-cbc' is still in OpenSSL 3's default provider.
 * So 'des'/'des-cbc' with an 8-byte key is rerouted to 'des-ede3-cbc' with the key repeated
 * three times: byte-for-byte the same tokens, without --openssl-legacy-provider. s3rver calls
 * `crypto.createCipheriv` through the shared module object at request time, so patching that
 * object before the first request is enough. Applied once per process, and only where
 * single DES is really unavailable; every other algorithm goes straight through.
 */
function allowSingleDesOnOpenSsl3(): void {
  const patchable = crypto as typeof crypto & { [PATCHED]?: true };
  if (patchable[PATCHED] || singleDesWorks()) return;
  const reroute = (algorithm: string, key: crypto.CipherKey): [string, crypto.CipherKey] =>
    /^des(-cbc)?$/i.test(algorithm) && Buffer.isBuffer(key) && key.length === 8
      ? ['des-ede3-cbc', Buffer.concat([key, key, key])]
      : [algorithm, key];
  const wrap = <F extends (...args: never[]) => unknown>(original: F): F =>
    ((algorithm: string, key: crypto.CipherKey, ...rest: unknown[]) =>
      Reflect.apply(original, crypto, [...reroute(algorithm, key), ...rest])) as unknown as F;
  patchable.createCipheriv = wrap(crypto.createCipheriv);
  patchable.createDecipheriv = wrap(crypto.createDecipheriv);
  patchable[PATCHED] = true;
}

function singleDesWorks(): boolean {
  try {
    crypto.createCipheriv('des', Buffer.alloc(8), Buffer.alloc(8));
    return true;
  } catch {
    return false;
  }
}

export interface LocalS3Iam {
  authorize: Authorizer;
  /** The access key ids the local stack gave out besides the admin's (each with LOCAL_SECRET_KEY). */
  accessKeyIds: string[];
}

const xmlEscape = (text: string) => text.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * IAM as S3 applies it: the caller's policies and the bucket policy must allow every action the request
 * needs; and a GET or HEAD of a missing key answers 404 only to a caller allowed s3:ListBucket on the
 * bucket whatever the prefix, 403 AccessDenied to any other (`missingKeyRequest`).
 */
async function iamRefusal(
  req: http.IncomingMessage,
  iam: LocalS3Iam & { store: S3rverInstance['store'] },
): Promise<{ code: string; message: string } | null> {
  const url = req.url ?? '/';
  const accessKeyId = accessKeyOf(req.headers.authorization, url);
  let requests: ReturnType<typeof s3Requests>;
  try {
    requests = s3Requests(req.method ?? 'GET', url, req.headers);
  } catch (error) {
    return { code: 'AccessDenied', message: (error as Error).message };
  }
  const denial = await iam.authorize(accessKeyId, requests);
  if (denial?.unknownKey) {
    return {
      code: 'InvalidAccessKeyId',
      message: 'The AWS Access Key Id you provided does not exist in our records.',
    };
  }
  if (denial) return { code: 'AccessDenied', message: denial.message };
  const reads = requests[0]?.action === 's3:GetObject' && (req.method === 'GET' || req.method === 'HEAD');
  if (!reads || accessKeyId === ADMIN_ACCESS_KEY) return null;
  const { bucket, key } = s3Target(url);
  if (await iam.store.existsObject(bucket, key)) return null;
  const listing = await iam.authorize(accessKeyId, [missingKeyRequest(bucket)]);
  return listing && { code: 'AccessDenied', message: listing.message };
}

/**
 * s3rver checks a presigned URL's expiry but not its Signature V4 (its V4 support computes nothing),
 * so a URL with another content type, length or key would pass locally and fail in AWS. This front
 * checks every query-signed request as S3 does (the canonical request over the signed headers, the
 * key derived from the secret, scope and date, expiry) and answers S3's 403 XML when it does not
 * match; everything else goes to s3rver's own request listener in this process, the request and its
 * body unchanged (a second loopback hop to s3rver's server would only double the HTTP work).
 */
async function signatureCheckingFront(
  s3rver: http.RequestListener,
  iam: (LocalS3Iam & { store: S3rverInstance['store'] }) | undefined,
): Promise<{ endpoint: string; close(): Promise<void> }> {
  const keys = new Set([ADMIN_ACCESS_KEY, ...(iam?.accessKeyIds ?? [])]);
  const knows = (accessKeyId: string) => keys.has(accessKeyId);
  const refuse = (
    req: http.IncomingMessage,
    res: http.ServerResponse,
    refusal: { code: string; message: string },
  ) => {
    req.resume();
    res.writeHead(403, { 'content-type': 'application/xml' });
    // A HEAD answer has no body: the SDK sees only the status.
    res.end(
      req.method === 'HEAD'
        ? undefined
        : `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${refusal.code}</Code><Message>${xmlEscape(refusal.message)}</Message></Error>`,
    );
  };
  const server = http.createServer((req, res) => {
    const refusal = checkPresigned(req, knows);
    if (refusal) return refuse(req, res, refusal);
    if (!iam) return s3rver(req, res);
    // The request waits, unread, while its authorization is evaluated.
    req.pause();
    iamRefusal(req, iam).then(
      (denied) => (denied ? refuse(req, res, denied) : s3rver(req, res)),
      (error: unknown) => {
        req.resume();
        res.writeHead(500, { 'content-type': 'application/xml' });
        res.end(`<Error><Code>InternalError</Code><Message>${xmlEscape(String(error))}</Message></Error>`);
      },
    );
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}

const rfc3986 = (value: string): string =>
  encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

function checkPresigned(
  req: http.IncomingMessage,
  knows: (accessKeyId: string) => boolean,
): { code: string; message: string } | null {
  const url = req.url ?? '/';
  const queryAt = url.indexOf('?');
  if (queryAt < 0 || !/[?&]X-Amz-Signature=/.test(url)) return null;
  const path = url.slice(0, queryAt);
  const pairs = url
    .slice(queryAt + 1)
    .split('&')
    .filter(Boolean)
    .map((pair) => {
      const at = pair.indexOf('=');
      const decode = (v: string) => decodeURIComponent(v.replace(/\+/g, ' '));
      return at < 0 ? [decode(pair), ''] : [decode(pair.slice(0, at)), decode(pair.slice(at + 1))];
    }) as Array<[string, string]>;
  const query = Object.fromEntries(pairs);
  const mismatch = {
    code: 'SignatureDoesNotMatch',
    message: 'The request signature we calculated does not match the signature you provided.',
  };
  if (query['X-Amz-Algorithm'] !== 'AWS4-HMAC-SHA256') return mismatch;
  const [accessKeyId, date, region, service, terminal] = String(query['X-Amz-Credential']).split('/');
  const secret = knows(accessKeyId ?? '') ? LOCAL_SECRET_KEY : undefined;
  if (!secret || !date || !region || !service || terminal !== 'aws4_request') {
    return {
      code: 'InvalidAccessKeyId',
      message: 'The AWS Access Key Id you provided does not exist in our records.',
    };
  }
  const amzDate = String(query['X-Amz-Date']);
  const signedAt = Date.parse(
    amzDate.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, '$1-$2-$3T$4:$5:$6Z'),
  );
  const expires = Number(query['X-Amz-Expires']);
  if (!Number.isFinite(signedAt) || !(expires > 0) || Date.now() > signedAt + expires * 1000) {
    return { code: 'AccessDenied', message: 'Request has expired' };
  }
  const signedHeaders = String(query['X-Amz-SignedHeaders']).split(';');
  const canonicalHeaders = signedHeaders
    .map(
      (name) =>
        `${name}:${String(req.headers[name] ?? '')
          .trim()
          .replace(/\s+/g, ' ')}\n`,
    )
    .join('');
  const canonicalQuery = pairs
    .filter(([key]) => key !== 'X-Amz-Signature')
    .map(([key, value]) => [rfc3986(key), rfc3986(value)])
    .sort(([a], [b]) => (a! < b! ? -1 : a! > b! ? 1 : 0))
    .map(([key, value]) => `${key}=${value}`)
    .join('&');
  const canonicalRequest = [
    req.method,
    path,
    canonicalQuery,
    canonicalHeaders,
    signedHeaders.join(';'),
    query['X-Amz-Content-Sha256'] ?? 'UNSIGNED-PAYLOAD',
  ].join('\n');
  const scope = `${date}/${region}/${service}/aws4_request`;
  const stringToSign = [
    'AWS4-HMAC-SHA256',
    amzDate,
    scope,
    crypto.createHash('sha256').update(canonicalRequest).digest('hex'),
  ].join('\n');
  const hmac = (key: crypto.BinaryLike, data: string) =>
    crypto.createHmac('sha256', key).update(data).digest();
  const key = hmac(hmac(hmac(hmac(`AWS4${secret}`, date), region), service), 'aws4_request');
  const expected = hmac(key, stringToSign).toString('hex');
  const given = String(query['X-Amz-Signature']);
  const same =
    given.length === expected.length && crypto.timingSafeEqual(Buffer.from(given), Buffer.from(expected));
  return same ? null : mismatch;
}
