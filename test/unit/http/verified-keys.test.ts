import middy from '@middy/core';
import { describe, expect, it } from 'vitest';
import { type ApiKeyRecord, generateApiKey } from '#core/keys/api-key.ts';
import { VERIFIED_KEY_TTL_MS, verifiedKeys } from '#core/keys/verified-keys.ts';
import type { ApiKeyRepository } from '#core/ports.ts';
import { type HttpContext, type HttpEvent, type HttpStackDeps, httpStack } from '#http/http-stack.ts';
import { type HttpResult, json } from '#http/responses.ts';

/** A key store that counts its reads, and a clock the test moves. */
function setup() {
  const records = new Map<string, ApiKeyRecord>();
  let reads = 0;
  let now = 1_000_000;
  const keys: ApiKeyRepository = {
    async findById(keyId) {
      reads++;
      const record = records.get(keyId);
      return record ? structuredClone(record) : null;
    },
    async create(record) {
      records.set(record.keyId, record);
    },
    async updateDefaults(keyId, defaults) {
      records.get(keyId)!.defaults = defaults;
    },
  };
  const cache = verifiedKeys({ now: () => now });
  const deps = {
    keys,
    verifiedKeys: cache,
    masterKey: async () => null,
    maxBodyBytes: 1024,
    policy: {
      allowKeyInQuery: false,
      allowKeyInForm: false,
      guestTrialCredits: 0,
      guestSessionsPerAddressPerDay: 0,
    },
  } as unknown as HttpStackDeps;
  const handler = middy<HttpEvent, HttpResult, Error, HttpContext>()
    .use(httpStack({ auth: 'key', deps: () => deps }))
    .handler(async (_event, context) =>
      json(200, { keyId: context.caller.kind === 'key' ? context.caller.keyId : null }),
    );
  const call = async (method: string, key: string) => {
    const event = {
      headers: { 'x-api-key': key },
      requestContext: { http: { method, sourceIp: '127.0.0.1' } },
      routeKey: `${method} /api/v1/jobs`,
      rawPath: '/api/v1/jobs',
    } as unknown as HttpEvent;
    return ((await handler(event, {} as HttpContext)) as HttpResult).statusCode;
  };
  const addKey = () => {
    const { secret, secretHash, keyId } = generateApiKey();
    records.set(keyId, {
      keyId,
      secretHash,
      name: null,
      disabled: false,
      createdAt: new Date(now).toISOString(),
      defaults: {},
    });
    return { secret, keyId };
  };
  return {
    call,
    addKey,
    disable: (keyId: string) => {
      records.get(keyId)!.disabled = true;
    },
    reads: () => reads,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

describe('verified keys (reads authenticated from keys verified in the last seconds)', () => {
  it('reads a key once for many reads within the TTL, and again after it', async () => {
    const s = setup();
    const { secret } = s.addKey();
    for (let i = 0; i < 5; i++) expect(await s.call('GET', secret)).toBe(200);
    expect(s.reads()).toBe(1);
    s.advance(VERIFIED_KEY_TTL_MS);
    expect(await s.call('GET', secret)).toBe(200);
    expect(s.reads()).toBe(2);
  });

  it('reads the key for every request that is not a read', async () => {
    const s = setup();
    const { secret } = s.addKey();
    for (const method of ['POST', 'DELETE', 'PUT', 'POST']) expect(await s.call(method, secret)).toBe(200);
    expect(s.reads()).toBe(4);
  });

  it('refuses a disabled key at once for writes, and for reads at the latest when the TTL ends', async () => {
    const s = setup();
    const { secret, keyId } = s.addKey();
    expect(await s.call('GET', secret)).toBe(200);
    s.disable(keyId);
    expect(await s.call('POST', secret)).toBe(401);
    // The refused write forgot the key here: reads stop at once too.
    expect(await s.call('GET', secret)).toBe(401);

    const other = s.addKey();
    expect(await s.call('GET', other.secret)).toBe(200);
    s.disable(other.keyId);
    s.advance(VERIFIED_KEY_TTL_MS - 1);
    expect(await s.call('GET', other.secret)).toBe(200); // the documented staleness of a read
    s.advance(1);
    expect(await s.call('GET', other.secret)).toBe(401);
    expect(await s.call('GET', other.secret)).toBe(401);
  });

  it('keeps no unknown key, and a remembered key stands for its own secret only', async () => {
    const s = setup();
    const unknown = generateApiKey().secret;
    expect(await s.call('GET', unknown)).toBe(401);
    expect(await s.call('GET', unknown)).toBe(401);
    expect(s.reads()).toBe(2);

    const { secret } = s.addKey();
    expect(await s.call('GET', secret)).toBe(200);
    // The same key id with another secret (the id is a prefix of the hash) is read and refused.
    expect(await s.call('GET', `${secret}x`)).toBe(401);
    expect(s.reads()).toBe(4);
  });

  it('holds a bounded number of keys, dropping the oldest', () => {
    let now = 0;
    const cache = verifiedKeys({ capacity: 2, now: () => now });
    const record = (keyId: string): ApiKeyRecord => ({
      keyId,
      secretHash: keyId,
      name: null,
      disabled: false,
      createdAt: '',
      defaults: {},
    });
    cache.remember('a', record('a'));
    cache.remember('b', record('b'));
    cache.remember('c', record('c'));
    expect(cache.recall('a')).toBeUndefined();
    expect(cache.recall('b')?.keyId).toBe('b');
    expect(cache.recall('c')?.keyId).toBe('c');
    cache.remember('d', { ...record('d'), disabled: true });
    expect(cache.recall('d')).toBeUndefined();
    now = VERIFIED_KEY_TTL_MS;
    expect(cache.recall('b')).toBeUndefined();
  });
});
