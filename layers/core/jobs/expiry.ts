/**
 * When a job's stored files are gone. The bucket's lifecycle rules delete them (lib/ makes the rules from
 * STORAGE_PREFIXES), but S3 removes expired objects late and asynchronously, so the service decides from the
 * job's own timestamps instead of from whether an object is still there (docs/decisions/0044-expiry-from-timestamps.md).
 */
import { STORAGE_PREFIXES } from '../storage-layout.ts';
import type { Job, JobOutput } from './job.ts';

/** Results live this long after the job finished (the bucket's `results/` rule). */
export const RESULT_TTL_DAYS = STORAGE_PREFIXES.results.expireDays;
/** A job's own source photo and background live this long after the job was created (`sources/`). */
export const SOURCE_TTL_DAYS = STORAGE_PREFIXES.sources.expireDays;

const DAY_MS = 86_400_000;

/** The output fields that link to a result file; past `expires_at` the job shows none of them. */
const FILE_FIELDS = [
  'url',
  'plate_mask_url',
  'background_mask_url',
  'mask_url',
] as const satisfies ReadonlyArray<keyof JobOutput>;

/** The lifecycle days of a key's area; null for an area kept without expiry (`keys/`). */
export function lifecycleDaysOf(key: string): number | null {
  const area = Object.values(STORAGE_PREFIXES).find(({ prefix }) => key.startsWith(prefix));
  return area?.expireDays ?? null;
}

/**
 * The moment from which an object may be gone: `writtenBy`, a moment no later than its write, plus its area's
 * lifecycle days. S3 counts from the write and rounds up to the next midnight UTC, so it never deletes the
 * object earlier. null for an area without a rule.
 */
export function goneFrom(key: string, writtenBy: string): string | null {
  const days = lifecycleDaysOf(key);
  return days === null ? null : new Date(Date.parse(writtenBy) + days * DAY_MS).toISOString();
}

const isPast = (at: string, now: Date): boolean => Date.parse(at) <= now.getTime();

/** The names of the files a job's output links to (`result.jpg`, `plate_mask.png`, ...). */
export function resultNames(job: Job): string[] {
  const links = FILE_FIELDS.flatMap((field) => job.output?.[field] ?? []);
  return [...new Set(links.map((link) => link.slice(link.lastIndexOf('/') + 1)))];
}

/**
 * When a job's result files are gone: `finished_at` + RESULT_TTL_DAYS; null for a job that has none (not
 * succeeded, or an analysis). The files are written before the job finishes, so the results' rule may, at
 * a UTC midnight that falls between the write and the finish, count from a few seconds earlier; a file
 * missing before `expires_at` is answered as expired too (resultLink).
 */
export function resultsExpireAt(job: Job): string | null {
  if (job.status !== 'success' || !job.finishedAt || resultNames(job).length === 0) return null;
  return goneFrom(STORAGE_PREFIXES.results.prefix, job.finishedAt);
}

const resultsExpired = (job: Job, now: Date): boolean => {
  const at = resultsExpireAt(job);
  return at !== null && isPast(at, now);
};

/** The job as it is shown at `now`: past its `expires_at` the output no longer links to the deleted files. */
export function asShownAt(job: Job, now: Date): Job {
  if (!job.output || !resultsExpired(job, now)) return job;
  const output = { ...job.output };
  for (const field of FILE_FIELDS) delete output[field];
  return { ...job, output };
}

/**
 * The first stored input of a job (its source photo, then its background file) that may be gone at `now`,
 * and since when; null while all are kept. `created_at` bounds the write of the inputs a job stores itself:
 * it is taken before they are written.
 */
export function expiredInput(job: Job, now: Date): { key: string; goneFrom: string } | null {
  for (const key of [job.source.key, job.params.backgroundFileKey]) {
    const at = key ? goneFrom(key, job.createdAt) : null;
    if (key && at && isPast(at, now)) return { key, goneFrom: at };
  }
  return null;
}
