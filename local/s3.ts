import crypto from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import type http from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// s3rver ships no type declarations; only the members used here are described.
type S3rverInstance = { run(): Promise<AddressInfo>; close(): Promise<void>; httpServer?: http.Server };
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
  const { port } = await server.run().catch(async (err: unknown) => {
    if (!opts.dataDir) await rm(directory, { recursive: true, force: true });
    throw err;
  });
  return {
    endpoint: `http://127.0.0.1:${port}`,
    async close() {
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
