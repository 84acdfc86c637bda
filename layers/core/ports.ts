import type { CreditAccount } from './credits/credits.ts';
import type { IdempotencyRecord } from './idempotency/idempotency.ts';
import type { Job } from './jobs/job.ts';
import type { ApiKeyRecord, KeyDefaults } from './keys/api-key.ts';

/** A credit movement that must happen in the same atomic write as the job change it belongs to. */
export interface CreditMovement {
  account: string;
  amount: number;
  kind: 'reserve' | 'charge' | 'release';
}

export interface IdempotencyClaim {
  scope: string;
  key: string;
  fingerprint: string;
}

export type InsertOutcome = { inserted: true } | { inserted: false; existing: IdempotencyRecord };

/** Jobs and the credits that move with them. Every write is atomic with its credit movement. */
export interface JobRepository {
  get(jobId: string): Promise<Job | null>;
  findIdempotent(scope: string, key: string): Promise<IdempotencyRecord | null>;
  /**
   * Store a new job, reserve its credits and claim its idempotency key, all or nothing.
   * @throws InsufficientCreditsError when the account cannot cover the reservation.
   */
  insert(
    job: Job,
    reservation: CreditMovement | null,
    claim: IdempotencyClaim | null,
  ): Promise<InsertOutcome>;
  /**
   * Replace `before` with `after` only if nobody changed the job meanwhile, together with `movement`.
   * @returns false when the job had changed (the caller re-reads and decides again).
   */
  update(before: Job, after: Job, movement: CreditMovement | null): Promise<boolean>;
}

export interface AccountRepository {
  get(account: string): Promise<CreditAccount | null>;
}

export interface ApiKeyRepository {
  findById(keyId: string): Promise<ApiKeyRecord | null>;
  create(record: ApiKeyRecord, credits: number): Promise<void>;
  updateDefaults(keyId: string, defaults: KeyDefaults): Promise<void>;
}

export interface ObjectStore {
  put(key: string, body: Buffer, contentType: string): Promise<void>;
  get(key: string): Promise<Buffer>;
  delete(key: string): Promise<void>;
  /** A time-limited URL that lets anyone holding it read the object. */
  presignGet(key: string, expiresInSeconds: number): Promise<string>;
}

export interface WorkflowStarter {
  /** Start the job's workflow; starting the same attempt twice is a no-op. */
  start(jobId: string, attempt: number): Promise<void>;
}

export interface Clock {
  now(): Date;
}
