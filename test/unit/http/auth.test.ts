import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { type ApiKeyRecord, generateApiKey, hashSecret } from '#core/keys/api-key.ts';
import type { AccountRepository, ApiKeyRepository, GuestRepository } from '#core/ports.ts';
import { type AuthDeps, type AuthPolicy, callerForKey, presentedKey } from '#http/auth.ts';

/** 401 as a client meets it: which keys are refused, and that a refusal never becomes a guest request. */
const POLICY: AuthPolicy = {
  allowKeyInQuery: false,
  allowKeyInForm: false,
  guestTrialCredits: 0,
  guestSessionsPerAddressPerDay: 0,
};
const MASTER_KEY = 'pjm_unit_master_key';

const eventWith = (headers: Record<string, string>, query?: Record<string, string>): APIGatewayProxyEventV2 =>
  ({ headers, queryStringParameters: query }) as unknown as APIGatewayProxyEventV2;

function keyStore() {
  const records = new Map<string, ApiKeyRecord>();
  const keys: ApiKeyRepository = {
    async findById(keyId) {
      return records.get(keyId) ?? null;
    },
    async create(record) {
      records.set(record.keyId, record);
    },
    async updateDefaults() {},
  };
  const add = (disabled = false) => {
    const { secret, secretHash, keyId } = generateApiKey();
    records.set(keyId, {
      keyId,
      secretHash,
      name: null,
      disabled,
      createdAt: '2026-11-27T00:00:00Z',
      defaults: {},
    });
    return { secret, keyId };
  };
  const deps: AuthDeps = {
    keys,
    accounts: {} as AccountRepository,
    guests: {} as GuestRepository,
    masterKeySha256: hashSecret(MASTER_KEY),
    policy: POLICY,
  };
  return { deps, add };
}

describe('presentedKey: 401 for a key that is sent wrong, never a guest request', () => {
  const refused =
    (headers: Record<string, string>, query?: Record<string, string>, form = {}) =>
    () =>
      presentedKey(eventWith(headers, query), form, POLICY);

  it.each([
    ['an empty X-API-Key', { 'x-api-key': '  ' }],
    ['Authorization that is not Bearer <key>', { authorization: 'Basic dXNlcjpwYXNz' }],
    ['two different keys', { 'x-api-key': 'pjk_one', authorization: 'Bearer pjk_two' }],
  ])('refuses %s', (_name, headers) => {
    expect(refused(headers)).toThrow(expect.objectContaining({ status: 401, code: 401 }));
  });

  it('refuses a key in the query string or the form field unless the server allows it, naming the header to use', () => {
    expect(refused({}, { api_key: 'pjk_one' })).toThrow(/query string are disabled.*X-API-Key/);
    expect(refused({}, undefined, { api_key: 'pjk_one' })).toThrow(/form field is disabled.*X-API-Key/);
  });

  it('takes the same key sent in two places, and no key as no key (a guest, where the route allows one)', () => {
    expect(
      presentedKey(eventWith({ 'x-api-key': 'pjk_one', authorization: 'Bearer pjk_one' }), {}, POLICY),
    ).toBe('pjk_one');
    expect(presentedKey(eventWith({}), {}, POLICY)).toBeNull();
  });
});

describe('callerForKey: 401 for a key that is not valid', () => {
  it('refuses an unknown key and a disabled key with one answer, so keys cannot be probed', async () => {
    const { deps, add } = keyStore();
    const disabled = add(true);
    const unknown = generateApiKey().secret;
    const answers = await Promise.all(
      [unknown, disabled.secret].map((key) => callerForKey(deps, key).catch((error: Error) => error)),
    );
    for (const answer of answers) {
      expect(answer).toMatchObject({ status: 401, message: 'The API key is not valid or has been disabled' });
    }
  });

  it('knows a valid key as its own account, and the master key as master', async () => {
    const { deps, add } = keyStore();
    const valid = add();
    await expect(callerForKey(deps, valid.secret)).resolves.toMatchObject({
      kind: 'key',
      keyId: valid.keyId,
      account: valid.keyId,
    });
    await expect(callerForKey(deps, MASTER_KEY)).resolves.toEqual({ kind: 'master' });
    await expect(callerForKey({ ...deps, masterKeySha256: null }, MASTER_KEY)).rejects.toMatchObject({
      status: 401,
    });
  });
});
