/** The contract of GET /results/{job_id}/{name}: its route entries in the OpenAPI document. */
import { endpointContract, location } from '#http/openapi.ts';

export const contract = endpointContract({
  operations: {
    'GET /results/{job_id}/{name}': {
      operationId: 'getResult',
      summary: 'Download a result file',
      description:
        'Needs no key: the 120-bit random job id is the capability, so `<img src>` and plain downloads work. ' +
        'Results are kept 30 days.',
      tag: 'Results',
      auth: 'none',
      responses: {
        302: {
          description: 'Redirect to the file.',
          headers: location('Presigned storage link, valid 15 minutes.'),
        },
      },
      errors: [404, 500],
    },
  },
});
