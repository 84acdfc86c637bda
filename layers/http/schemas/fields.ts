/**
 * The field types of the document's schemas (the shared and endpoints' document.ts); no contract imports
 * them, so no handler builds them (./describe.ts is what a contract may use).
 */
import * as z from 'zod';
import { RESULT_LINK_SECONDS } from '#core/jobs/envelope.ts';
import { BOOLEAN_SPELLINGS, PLATE_COLOR_NAMES } from '#core/jobs/params.ts';
import { formatDuration } from '#core/units.ts';
import { resultsKept } from './describe.ts';

const HEX_COLOR = /^#[0-9a-fA-F]{6}$/;
const IMAGE_TYPES = ['image/jpeg', 'image/png', 'image/webp'];

export const resultUrl = z
  .string()
  .describe(
    'Path of the result image, `/api/v1/results/{job_id}/{name}`, relative to the service address. It needs ' +
      'no key (the 120-bit random job id is the capability, so `<img src>` and plain downloads work) and ' +
      `answers 302 to a presigned storage link valid ${formatDuration(RESULT_LINK_SECONDS)}. ${resultsKept} ` +
      'after the job finished, until its `expires_at`; from then on the job no longer shows this field.',
  );
export const resultPath = (what: string) => z.string().describe(`Path of the ${what}; served like \`url\`.`);
export const timestamp = z.string().meta({ format: 'date-time' });
export const cursor = z.int().nullable().meta({
  format: 'int64',
  description: 'Pass as `before` to read the next page; null on the last page.',
});
export const imageFile = (description: string) => z.file().mime(IMAGE_TYPES).describe(description);

export const colourValues = {
  anyOf: [
    { type: 'string', pattern: HEX_COLOR.source },
    { type: 'string', enum: PLATE_COLOR_NAMES },
  ],
};
export const booleanValues = {
  anyOf: [{ type: 'boolean' }, { type: 'string', enum: BOOLEAN_SPELLINGS }, { type: 'number', enum: [0, 1] }],
};
