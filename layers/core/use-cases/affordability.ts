import { InsufficientCreditsError } from '../errors.ts';
import { accountOf, type Caller } from '../keys/caller.ts';
import type { AccountRepository } from '../ports.ts';

/**
 * 402 before anything is fetched, decoded or stored: work a caller could not pay for is refused at once.
 * The reservation later is what guarantees payment; this only spares the work. Callers without an account
 * (the master key) always pass.
 */
export async function refuseUnlessAffordable(
  accounts: Pick<AccountRepository, 'get'>,
  caller: Caller,
  cost: number,
  what: string,
): Promise<void> {
  const account = accountOf(caller);
  if (!account) return;
  const available = (await accounts.get(account))?.available ?? 0;
  if (available < cost) throw new InsufficientCreditsError(`${what}; ${available} are available`);
}
