import { randomBytes, randomInt } from 'node:crypto';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

function randomToken(length: number): string {
  const bytes = randomBytes(length);
  let out = '';
  for (const byte of bytes) out += ALPHABET[byte & 31];
  return out;
}

/** Every id `newJobId` makes matches this; anything else names no job (404). */
export const JOB_ID_PATTERN = /^job_[0-9a-z]{24}$/;

/** Every result file name a job's output links to matches this (`result.jpg`, `plate_mask.png`, ...). */
export const RESULT_NAME_PATTERN = /^[a-z_]+\.(jpg|png|webp)$/;

/** 120 random bits: job ids double as capabilities for their result URLs. */
export const newJobId = (): string => `job_${randomToken(24)}`;

/**
 * A job's run is named after its attempt: every run of one attempt (Express repeats runs) has this name, and
 * the webhook's delivery and event ids are made from it.
 */
export const jobRunName = (jobId: string, attempt: number): string => `${jobId}-${attempt}`;

/** A run's Standard follow-up is named after the run (`{run}` + this), so one run starts at most one. */
export const FOLLOW_UP_SUFFIX = '-follow-up';

/**
 * Listing cursor: milliseconds × 1000 plus a random tiebreak keeps creation order and stays below
 * 2^53, so it survives JSON as the int64 the spec promises.
 */
export const newSequence = (nowMs: number): number => nowMs * 1000 + randomInt(1000);
