/**
 * Numbers as the documents and messages state them, written from the constants the code runs on, so a
 * sentence cannot keep a number its constant no longer has (test/unit/http/described-facts.test.ts).
 *
 * Sizes are binary, as Lambda's and API Gateway's quotas are: 1 KB = 1,024 bytes, 1 MB = 1,024 KB,
 * 1 GB = 1,024 MB. The OpenAPI document says so once (`SIZE_UNITS`).
 */

export const KB = 1024;
export const MB = 1024 * KB;
export const GB = 1024 * MB;

const MINUTE_SECONDS = 60;
export const HOUR_SECONDS = 60 * MINUTE_SECONDS;
export const DAY_SECONDS = 24 * HOUR_SECONDS;

export const SIZE_UNITS = 'Sizes are binary: 1 MB is 1,048,576 bytes, 1 GB is 1,024 MB.';

/**
 * `4,669,440`: every digit, grouped, as `toLocaleString('en-US')` writes it. Not by Intl: the schemas' descriptions
 * are written at import, and Intl's first number format costs a cold start about 25 ms of CPU (ICU's data).
 */
export function formatCount(value: number): string {
  const [whole = '', fraction] = String(value).split('.');
  const grouped = whole.replace(/\B(?=(\d{3})+$)/g, ',');
  return fraction === undefined ? grouped : `${grouped}.${fraction}`;
}

/** Exact bytes: `4,669,440 bytes`. */
export const formatByteCount = (bytes: number): string => `${formatCount(bytes)} bytes`;

const SIZE_STEPS: ReadonlyArray<readonly [number, string]> = [
  [GB, 'GB'],
  [MB, 'MB'],
  [KB, 'KB'],
];

/** `20 MB`, `2 GB`, `64 KB`; a size between whole units keeps one decimal (`4.5 MB`). */
export function formatBytes(bytes: number): string {
  const step = SIZE_STEPS.find(([size]) => bytes >= size);
  if (!step) return formatByteCount(bytes);
  return `${formatCount(Number((bytes / step[0]).toFixed(1)))} ${step[1]}`;
}

const DURATION_STEPS: ReadonlyArray<readonly [number, string]> = [
  [DAY_SECONDS, 'day'],
  [HOUR_SECONDS, 'hour'],
  [MINUTE_SECONDS, 'minute'],
  [1, 'second'],
];

/**
 * `15 minutes`, `1 hour`, `24 hours`, `30 days`: the largest unit that divides it, except that a day is
 * only said from two on (a lifetime of `24 hours` is how people set and read it).
 */
export function formatDuration(seconds: number): string {
  const [size, unit] =
    DURATION_STEPS.find(([size]) => seconds % size === 0 && (size !== DAY_SECONDS || seconds >= 2 * size)) ??
    DURATION_STEPS.at(-1)!;
  const count = seconds / size;
  return `${formatCount(count)} ${unit}${count === 1 ? '' : 's'}`;
}

/** `64 megapixels`. */
export const formatMegapixels = (pixels: number): string =>
  `${formatCount(Number((pixels / 1_000_000).toFixed(1)))} megapixels`;

/** A share as a percentage: 0.88 is `88%`. */
export const formatShare = (share: number): string => `${formatCount(Number((share * 100).toFixed(1)))}%`;
