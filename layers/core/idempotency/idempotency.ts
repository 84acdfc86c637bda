import { BadRequestError, ConflictError } from '../errors.ts';
import type { Job } from '../jobs/job.ts';
import { isTerminal } from '../jobs/job.ts';

export const MAX_IDEMPOTENCY_KEY_LENGTH = 200;
/** How long a key protects against duplicates; long enough to outlive any client retry loop. */
export const IDEMPOTENCY_TTL_SECONDS = 24 * 3600;

export function validateIdempotencyKey(raw: string | undefined): string | null {
  if (raw === undefined) return null;
  const key = raw.trim();
  if (key.length === 0) throw new BadRequestError('Idempotency-Key must not be empty');
  if (key.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
    throw new BadRequestError(`Idempotency-Key is longer than ${MAX_IDEMPOTENCY_KEY_LENGTH} characters`);
  }
  return key;
}

export interface IdempotencyRecord {
  jobId: string;
  fingerprint: string;
}

/**
 * What a repeated key means. The same request is never run twice: a finished job is replayed
 * with 200, one still running is returned as it is with 202, and a different request under the
 * same key is a client bug (409).
 */
export function replayDecision(
  record: IdempotencyRecord,
  fingerprint: string,
  job: Job,
): { status: 200 | 202 } {
  if (record.fingerprint !== fingerprint) {
    throw new ConflictError('This Idempotency-Key was already used with a different request body');
  }
  return { status: isTerminal(job.status) ? 200 : 202 };
}
