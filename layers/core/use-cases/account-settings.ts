import * as z from 'zod';
import { builtOnFirstUse } from '../built-on-first-use.ts';
import type { CreditAccount } from '../credits/credits.ts';
import { BadRequestError, UnauthorizedError } from '../errors.ts';
import { PRICES } from '../jobs/operations.ts';
import type { Caller } from '../keys/caller.ts';
import { webhookTargetProblem } from '../net/webhook-target.ts';
import type { AccountRepository, ApiKeyRepository } from '../ports.ts';

/**
 * Spec 2.9. The master key has no balance: its amounts are null and `unlimited` is true. A guest is
 * `authorized: false` (it holds no key) but `active` while its trial lasts.
 */
export async function getQuota(deps: { accounts: AccountRepository }, caller: Caller) {
  const account: CreditAccount | null =
    caller.kind === 'master' ? null : await deps.accounts.get(caller.account);
  const amount = (value: number) => (caller.kind === 'master' ? null : value);
  return {
    result: true,
    quota: {
      // A guest without a session yet has no trial balance until its first job opens one.
      active: caller.kind !== 'guest' || account !== null,
      authorized: caller.kind !== 'guest',
      remaining: amount(account?.available ?? 0),
      credits_remaining: amount(account?.available ?? 0),
      user_credits_remaining: amount(account?.available ?? 0),
      process_credit_cost: PRICES.edit,
      classification_credit_cost: PRICES.analysis,
      used_total: amount(account?.usedTotal ?? 0),
      ...(caller.kind === 'master' ? { unlimited: true } : {}),
    },
  };
}

/** The body of PUT, PATCH and POST /webhook (`webhookUrlField` refuses any other field by name). */
export const webhookUpdateSchema = builtOnFirstUse(() =>
  z.object({
    webhook_url: z
      .string()
      .trim()
      .max(2048)
      .refine(
        (value) => value === '' || /^https?:\/\/[^\s]+$/i.test(value),
        'must be an http(s) URL or empty',
      )
      .refine((value) => value === '' || URL.canParse(value), 'must be a valid URL'),
  }),
);

/** Spec 2.8: the setting as the key has it now. */
function webhookSetting(url: string | null, message: string) {
  return { result: true, code: 200, message, webhook_url: url ?? '', webhook_enabled: url !== null };
}

export async function getWebhookSetting(deps: { keys: ApiKeyRepository }, caller: Caller) {
  if (caller.kind === 'master') return webhookSetting(null, 'The master key stores no default webhook');
  if (caller.kind !== 'key') throw new UnauthorizedError('A webhook is a setting of an API key; send one');
  const record = await deps.keys.findById(caller.keyId);
  return webhookSetting(record?.defaults.webhookUrl ?? null, 'Current webhook setting');
}

/**
 * The `webhook_url` of a PUT, PATCH or POST body. It must be there: a body that misspells it or sends
 * nothing would otherwise read as "empty" and erase the stored URL. Only an explicit empty value (or
 * null) disables the webhook. Other fields are refused by name (`api_key` is authentication's).
 */
export function webhookUrlField(fields: Record<string, unknown>): unknown {
  const unknown = Object.keys(fields).filter((name) => name !== 'webhook_url' && name !== 'api_key');
  if (unknown.length > 0) {
    throw new BadRequestError(`Unknown field ${unknown[0]}: send webhook_url (empty to disable the webhook)`);
  }
  if (!Object.hasOwn(fields, 'webhook_url')) {
    throw new BadRequestError('Send webhook_url: a URL, or an empty value to disable the webhook');
  }
  return fields.webhook_url;
}

/**
 * Store (or with an empty value or DELETE, clear) the key's default webhook. Addresses that can never be
 * delivered to (private, loopback, link-local literals, `localhost`) are refused now rather than at the first job.
 */
export async function setWebhook(
  deps: { keys: ApiKeyRepository; allowLoopback: boolean },
  caller: Caller,
  raw: unknown,
) {
  if (caller.kind === 'master') {
    throw new BadRequestError(
      'The master key does not store a default webhook; send webhook_url with each job',
    );
  }
  if (caller.kind !== 'key') throw new UnauthorizedError('A webhook is a setting of an API key; send one');
  const parsed = webhookUpdateSchema().shape.webhook_url.safeParse(raw ?? '');
  if (!parsed.success) throw new BadRequestError(`webhook_url: ${parsed.error.issues[0]!.message}`);
  const url = parsed.data === '' ? null : new URL(parsed.data).toString();
  const problem = url && (await webhookTargetProblem(url, { allowLoopback: deps.allowLoopback }));
  if (problem) throw new BadRequestError(problem);
  const record = await deps.keys.findById(caller.keyId);
  await deps.keys.updateDefaults(caller.keyId, { ...(record?.defaults ?? {}), webhookUrl: url });
  return webhookSetting(url, url ? 'Webhook saved' : 'Webhook disabled');
}
