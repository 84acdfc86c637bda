/** The contract of GET /results/{job_id}/{name}: the result name its handler gets parsed, and the route entry. */
import * as z from 'zod';
import { RESULT_LINK_SECONDS } from '#core/jobs/envelope.ts';
import { RESULT_NAME_PATTERN } from '#core/jobs/ids.ts';
import { formatDuration } from '#core/units.ts';
import { NO_SUCH_RESULT } from '#core/use-cases/result-link.ts';
import { endpointContract, location } from '#http/openapi/contract.ts';
import { resultsKept } from '#http/schemas/describe.ts';

/** The path parameters only this endpoint has; its handler gets them parsed by these. */
const pathParameters = {
  name: z
    .string()
    .regex(RESULT_NAME_PATTERN, { error: NO_SUCH_RESULT })
    .describe('File name of the result, as in the job’s `url`, `plate_mask_url`, ...'),
};

export const contract = endpointContract({
  auth: 'none',
  pathParameters,
  operations: {
    'GET /results/{job_id}/{name}': {
      operationId: 'getResult',
      summary: 'Download a result file',
      description:
        'Needs no key: the 120-bit random job id is the capability, so `<img src>` and plain downloads work. ' +
        `${resultsKept} after the job finished (the job's \`expires_at\`); from then on, ` +
        'and for a file its owner deleted, this answers 410 instead of a link to a file that is gone.',
      tag: 'Results',
      responses: {
        302: {
          description: 'Redirect to the file.',
          headers: location(`Presigned storage link, valid ${formatDuration(RESULT_LINK_SECONDS)}.`),
        },
      },
      errors: [404, 410, 500],
    },
  },
});
