import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { ASSET_TTL_DAYS } from '#core/files/asset-rules.ts';
import { IDEMPOTENCY_TTL_SECONDS } from '#core/idempotency/idempotency.ts';
import { RESULT_LINK_SECONDS } from '#core/jobs/envelope.ts';
import { RESULT_TTL_DAYS } from '#core/jobs/expiry.ts';
import { CENTER_FRAMING, EQUAL_SIZE_SHARE, OUTPUT_QUALITY } from '#core/jobs/job.ts';
import { DEFAULT_PLATE_COLOR } from '#core/jobs/params.ts';
import { GUEST_SESSION_SECONDS } from '#core/keys/guest-session.ts';
import { DEFAULT_ZIP_LIMITS } from '#core/limits/archive.ts';
import { MAX_IMAGE_ASPECT, MAX_IMAGE_PIXELS, MAX_IMAGE_SIDE, MIN_IMAGE_SIDE } from '#core/limits/image.ts';
import {
  API_GATEWAY_PAYLOAD_BYTES,
  EVENT_OVERHEAD_BYTES,
  INTEGRATION_TIMEOUT_SECONDS,
  LAMBDA_INVOKE_PAYLOAD_BYTES,
  MAX_FIELD_BYTES,
  MAX_HEADER_BYTES,
  MAX_INLINE_BODY_BYTES,
  MAX_JSON_BODY_BYTES,
  MAX_URL_BYTES,
} from '#core/limits/request.ts';
import { MAX_ARCHIVE_BYTES, MAX_PHOTO_BYTES, MAX_SOURCE_BYTES } from '#core/limits/sources.ts';
import {
  DAY_SECONDS,
  formatByteCount,
  formatBytes,
  formatCount,
  formatDuration,
  formatMegapixels,
  formatShare,
  HOUR_SECONDS,
  SIZE_UNITS,
} from '#core/units.ts';
import { UPLOAD_TTL_HOURS, UPLOAD_URL_SECONDS } from '#core/uploads/upload.ts';
import { DOWNLOAD_LINK_SECONDS } from '#core/use-cases/download-batch.ts';
import { WEBHOOK_TIMEOUT_MS } from '#core/webhooks/delivery.ts';
import { describeRetrySchedule } from '#core/webhooks/retry-schedule.ts';
import { SIGNATURE_TOLERANCE_SECONDS } from '#core/webhooks/signature.ts';
import { buildOpenApiDocument } from '../../../functions/api/openapi.ts';

const UNITS =
  'bytes?|KB|MB|GB|TB|KiB|MiB|GiB|megapixels?|MP|px|pixels?|ms|s|seconds?|minutes?|hours?|days?|weeks?|times';
/** A number and its unit (`40 MB`, `24 hours`, `88%`, `2.5 times`), or an encoder's quality. */
const FACT = new RegExp(`(?<![\\w.,])(?:\\d[\\d,]*(?:\\.\\d+)?(?:\\s?(?:${UNITS})\\b|%)|quality \\d+)`, 'g');

function phrasesIn(text: string): string[] {
  return [...text.replaceAll(SIZE_UNITS, '').matchAll(FACT)].map((match) => match[0].replace(/\s+/g, ' '));
}

/**
 * Facts once (issue 36): a number with a unit in the API's text is written from the constant the code
 * runs on, never typed beside it. Each phrase the OpenAPI document may state is listed here with the
 * constant that produces it; a phrase no constant produces (a limit restated by hand, or one whose
 * constant has since moved) fails, named with where it stands.
 */
const DESCRIBED_FACTS: ReadonlyArray<readonly [constant: string, phrase: string]> = [
  ['MAX_SOURCE_BYTES', formatBytes(MAX_SOURCE_BYTES)],
  ['MAX_PHOTO_BYTES', formatBytes(MAX_PHOTO_BYTES)],
  ['MAX_ARCHIVE_BYTES', formatBytes(MAX_ARCHIVE_BYTES)],
  ['MAX_INLINE_BODY_BYTES', formatByteCount(MAX_INLINE_BODY_BYTES)],
  ['MAX_INLINE_BODY_BYTES', formatBytes(MAX_INLINE_BODY_BYTES)],
  ['LAMBDA_INVOKE_PAYLOAD_BYTES', formatBytes(LAMBDA_INVOKE_PAYLOAD_BYTES)],
  ['API_GATEWAY_PAYLOAD_BYTES', formatBytes(API_GATEWAY_PAYLOAD_BYTES)],
  ['INTEGRATION_TIMEOUT_SECONDS', formatDuration(INTEGRATION_TIMEOUT_SECONDS)],
  ['EVENT_OVERHEAD_BYTES', formatBytes(EVENT_OVERHEAD_BYTES)],
  ['MAX_URL_BYTES', formatByteCount(MAX_URL_BYTES)],
  ['MAX_HEADER_BYTES', formatByteCount(MAX_HEADER_BYTES)],
  ['MAX_JSON_BODY_BYTES', formatByteCount(MAX_JSON_BODY_BYTES)],
  ['MAX_FIELD_BYTES', formatByteCount(MAX_FIELD_BYTES)],
  ['MAX_IMAGE_PIXELS', formatMegapixels(MAX_IMAGE_PIXELS)],
  ['MAX_IMAGE_SIDE', `${formatCount(MAX_IMAGE_SIDE)} px`],
  ['MIN_IMAGE_SIDE', `${formatCount(MIN_IMAGE_SIDE)} px`],
  ['MAX_IMAGE_ASPECT', `${MAX_IMAGE_ASPECT} times`],
  ['DEFAULT_ZIP_LIMITS.maxEntryBytes', formatBytes(DEFAULT_ZIP_LIMITS.maxEntryBytes)],
  ['DEFAULT_ZIP_LIMITS.maxTotalBytes', formatBytes(DEFAULT_ZIP_LIMITS.maxTotalBytes)],
  ['DEFAULT_ZIP_LIMITS.ratioFloorBytes', formatBytes(DEFAULT_ZIP_LIMITS.ratioFloorBytes)],
  ['DEFAULT_ZIP_LIMITS.maxRatio', `${DEFAULT_ZIP_LIMITS.maxRatio} times`],
  ['UPLOAD_URL_SECONDS', formatDuration(UPLOAD_URL_SECONDS)],
  ['UPLOAD_TTL_HOURS', formatDuration(UPLOAD_TTL_HOURS * HOUR_SECONDS)],
  ['IDEMPOTENCY_TTL_SECONDS', formatDuration(IDEMPOTENCY_TTL_SECONDS)],
  ['GUEST_SESSION_SECONDS', formatDuration(GUEST_SESSION_SECONDS)],
  ['RESULT_TTL_DAYS', formatDuration(RESULT_TTL_DAYS * DAY_SECONDS)],
  ['RESULT_LINK_SECONDS', formatDuration(RESULT_LINK_SECONDS)],
  ['DOWNLOAD_LINK_SECONDS', formatDuration(DOWNLOAD_LINK_SECONDS)],
  ['ASSET_TTL_DAYS', `${ASSET_TTL_DAYS} days`],
  ['SIGNATURE_TOLERANCE_SECONDS', formatDuration(SIGNATURE_TOLERANCE_SECONDS)],
  ['WEBHOOK_TIMEOUT_MS', formatDuration(WEBHOOK_TIMEOUT_MS / 1000)],
  ...phrasesIn(describeRetrySchedule()).map((phrase) => ['WEBHOOK_RETRY_SCHEDULE', phrase] as const),
  ['OUTPUT_QUALITY.jpg', `quality ${OUTPUT_QUALITY.jpg}`],
  ['OUTPUT_QUALITY.webp', `quality ${OUTPUT_QUALITY.webp}`],
  ['CENTER_FRAMING.widthShare', formatShare(CENTER_FRAMING.widthShare)],
  ['CENTER_FRAMING.maxHeightShare', formatShare(CENTER_FRAMING.maxHeightShare)],
  ['CENTER_FRAMING.floorLine', formatShare(CENTER_FRAMING.floorLine)],
  ['CENTER_FRAMING.maxUpscale', `${CENTER_FRAMING.maxUpscale} times`],
  ['EQUAL_SIZE_SHARE', formatShare(EQUAL_SIZE_SHARE)],
];

const known = new Set(DESCRIBED_FACTS.map(([, phrase]) => phrase));

/** Every phrase of every string in `node` that no constant produced, as `where: phrase`. */
function unproducedFacts(node: unknown, where = '#'): string[] {
  if (typeof node === 'string') {
    return phrasesIn(node)
      .filter((phrase) => !known.has(phrase))
      .map((phrase) => `${where}: ${phrase}`);
  }
  if (node === null || typeof node !== 'object') return [];
  return Object.entries(node).flatMap(([key, value]) => unproducedFacts(value, `${where}/${key}`));
}

const document = buildOpenApiDocument();
const REPO = path.resolve(import.meta.dirname, '..', '..', '..');

/** The sources whose strings make up the document: the shared schemas, its frame, each endpoint's contract. */
const DESCRIBING = execFileSync(
  'git',
  ['ls-files', 'layers/http/schemas', 'layers/http/openapi', 'functions/api'],
  {
    cwd: REPO,
    encoding: 'utf8',
  },
)
  .split('\n')
  .filter((file) => /^(layers\/http\/.+|functions\/api\/(.+\/schema|openapi))\.ts$/.test(file));

/** Phrases typed into a string literal (or the text around a template's substitutions), as `file:line: phrase`. */
function typedFacts(file: string): string[] {
  const source = ts.createSourceFile(
    file,
    readFileSync(path.join(REPO, file), 'utf8'),
    ts.ScriptTarget.Latest,
    true,
  );
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (
      ts.isStringLiteral(node) ||
      ts.isNoSubstitutionTemplateLiteral(node) ||
      ts.isTemplateHead(node) ||
      ts.isTemplateMiddle(node) ||
      ts.isTemplateTail(node)
    ) {
      const line = source.getLineAndCharacterOfPosition(node.getStart()).line + 1;
      found.push(...phrasesIn(node.text).map((phrase) => `${file}:${line}: ${phrase}`));
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('numbers with units in the API’s descriptions', () => {
  it('are each produced by a constant (layers/core/units.ts over the limits, lifetimes and qualities)', () => {
    expect(unproducedFacts(document), 'write these from their constants, or list a new one').toEqual([]);
  });

  it('are never typed by hand where the document is written, even when the number is right today', () => {
    expect(DESCRIBING.length).toBeGreaterThan(20);
    expect(DESCRIBING.flatMap(typedFacts), 'interpolate the constant through layers/core/units.ts').toEqual(
      [],
    );
  });

  it('are found where the document states them, so the check above cannot pass on nothing', () => {
    const stated = new Set(phrasesIn(JSON.stringify(document)));
    for (const phrase of [
      '20 MB',
      '40 MB',
      '2 GB',
      '64 megapixels',
      '24 hours',
      '1 hour',
      '88%',
      'quality 92',
    ]) {
      expect(stated, phrase).toContain(phrase);
    }
  });

  it('fails on a number no constant produced, such as a pixel limit stated by hand', () => {
    const planted = {
      paths: { '/uploads': { post: { description: 'Limits: photos 40 MB and 100 megapixels.' } } },
    };
    expect(unproducedFacts(planted)).toEqual(['#/paths//uploads/post/description: 100 megapixels']);
  });

  it('state the one pixel limit, the one the header check and the decoder refuse past', () => {
    const megapixels = [...JSON.stringify(document).matchAll(/[\d,.]+ megapixels/g)].map((match) => match[0]);
    expect(megapixels.length).toBeGreaterThan(0);
    expect(new Set(megapixels)).toEqual(new Set([formatMegapixels(MAX_IMAGE_PIXELS)]));
  });
});

describe('the units', () => {
  it.each([
    [formatBytes(20 * 1024 * 1024), '20 MB'],
    [formatBytes(2 * 1024 ** 3), '2 GB'],
    [formatBytes(64 * 1024), '64 KB'],
    [formatBytes(MAX_INLINE_BODY_BYTES), '4.5 MB'],
    [formatBytes(100), '100 bytes'],
    [formatDuration(3600), '1 hour'],
    [formatDuration(24 * 3600), '24 hours'],
    [formatDuration(30 * 24 * 3600), '30 days'],
    [formatDuration(15 * 60), '15 minutes'],
    [formatDuration(10), '10 seconds'],
    [formatMegapixels(64_000_000), '64 megapixels'],
    [formatShare(0.72), '72%'],
  ])('%s is %s', (formatted, expected) => {
    expect(formatted).toBe(expected);
  });
});

/** Prose and pages a person reads outside the document, checked against the constants they quote. */
describe('the docs and the console', () => {
  const read = (file: string) => readFileSync(path.join(REPO, file), 'utf8').replace(/\s+/g, ' ');
  const sentences: Array<[string, string]> = [
    ['README.md', `| \`MAX_SOURCE_BYTES\` | ${formatBytes(MAX_SOURCE_BYTES)} |`],
    ['README.md', `| \`MAX_PHOTO_BYTES\` | ${formatBytes(MAX_PHOTO_BYTES)} |`],
    ['README.md', `| \`MAX_ARCHIVE_BYTES\` | ${formatBytes(MAX_ARCHIVE_BYTES)} |`],
    ['docs/security.md', `| request body (inline) | **${formatByteCount(MAX_INLINE_BODY_BYTES)}**`],
    ['docs/security.md', `| file part | ${formatBytes(MAX_SOURCE_BYTES)} (\`MAX_SOURCE_BYTES\`)`],
    [
      'docs/security.md',
      `| image pixels | ${formatCount(MAX_IMAGE_PIXELS)}, and ${formatCount(MAX_IMAGE_SIDE)} px a side`,
    ],
    [
      'docs/decisions/0036-direct-uploads-and-size-limits.md',
      `(${formatMegapixels(MAX_IMAGE_PIXELS)}, read from the header before decoding`,
    ],
    [
      'web/console/index.html',
      `id="plate-color" name="plate_color" type="color" value="${DEFAULT_PLATE_COLOR}"`,
    ],
  ];

  it.each(sentences)('%s says: %s', (file, sentence) => {
    expect(read(file)).toContain(sentence);
  });
});
