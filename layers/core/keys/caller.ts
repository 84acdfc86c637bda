import type { KeyDefaults } from './api-key.ts';

/** Who is calling, as established by authentication. */
export type Caller =
  | { kind: 'key'; keyId: string; account: string; defaults: KeyDefaults }
  | { kind: 'master' }
  | { kind: 'guest'; sessionId: string; account: string };

export const ownerIdOf = (caller: Caller): string =>
  caller.kind === 'key' ? caller.keyId : caller.kind === 'guest' ? `guest_${caller.sessionId}` : 'master';

/** The master key passes without deducting credits (spec 5.5), so it has no account to reserve from. */
/**
 * Whether the caller may see a record: its owner may, and the master key may see any. Anyone else is told
 * it does not exist (404, never 403), so ids cannot be probed.
 */
export const mayAccess = (caller: Caller, record: { ownerId: string }): boolean =>
  caller.kind === 'master' || record.ownerId === ownerIdOf(caller);

export const accountOf = (caller: Caller): string | null =>
  caller.kind === 'master' ? null : caller.account;

export const defaultsOf = (caller: Caller): KeyDefaults => (caller.kind === 'key' ? caller.defaults : {});
