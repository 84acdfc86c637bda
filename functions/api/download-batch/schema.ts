/** The contract of GET /batches/{batch_id}/download: its query (the run-time `downloadBatchQuery`, described) and the link it answers as JSON. */
import { downloadBatchQuery } from '#core/batches/input.ts';
import { BOOLEAN_SPELLINGS } from '#core/jobs/params.ts';
import { formatDuration } from '#core/units.ts';
import { DOWNLOAD_LINK_SECONDS } from '#core/use-cases/download-batch.ts';
import { endpointContract, json, location } from '#http/openapi/contract.ts';
import { documentedFields } from '#http/schemas/describe.ts';

const linkLifetime = formatDuration(DOWNLOAD_LINK_SECONDS);

export const contract = endpointContract({
  /** Query of GET /batches/{batch_id}/download: the schema its handler gets the query parsed with, described. */
  query: () =>
    documentedFields(downloadBatchQuery(), {
      partial: {
        enum: BOOLEAN_SPELLINGS,
        default: false,
        description: 'Also while the batch is processing or paused: the results ready so far (any case).',
      },
    }),
  auth: 'key',
  operations: {
    'GET /batches/{batch_id}/download': {
      operationId: 'downloadBatch',
      summary: 'Download the results of a batch as ZIP',
      description:
        `Answers 302 to a storage link (${linkLifetime}) of an \`application/zip\` archive: a client that follows ` +
        'redirects receives the ZIP with 200. API Gateway and Lambda cannot send large bodies themselves, so ' +
        'the archive is streamed into storage once per state of the batch, by a workflow step (202 with ' +
        '`Retry-After` until it is ready; 500 when building it failed), and served from there. It holds ' +
        'each succeeded photo’s result under the photo’s own path, with the result’s extension, and ' +
        '`manifest.json` (every item: status, output names, error). 409 while the batch is processing or ' +
        'paused (unless `partial=true`) and while no photo has succeeded. A request whose `Accept` names ' +
        '`application/json` and not `application/zip` gets the link as JSON (200) instead of the redirect: a ' +
        'browser page cannot read a redirect’s `Location`, and following it would send its key to the storage.',
      tag: 'Batches',
      responses: {
        202: {
          description:
            'The archive of this state of the batch is being built by a workflow step: ask again after ' +
            '`Retry-After` seconds. Body `{status: "building", retry_after, batch_id}`.',
          headers: {
            'Retry-After': {
              description: 'Seconds to wait before asking again.',
              schema: { type: 'integer' },
            },
          },
        },
        200: json('BatchDownloadLink', 'The link to the archive, for `Accept: application/json`.'),
        302: {
          description: 'Redirect to the ZIP archive.',
          headers: location(`Presigned storage link to the archive, valid ${linkLifetime}.`),
        },
      },
    },
  },
});
