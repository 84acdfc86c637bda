/** The contract of POST /batches/{batch_id}/{action}: the action its handler gets parsed, and the route entry. */
import * as z from 'zod';
import { BATCH_ACTIONS } from '#core/batches/batch.ts';
import { endpointContract, json } from '#http/openapi/contract.ts';

/** The path parameters only this endpoint has; its handler gets them parsed by these (an unknown action is 404). */
const pathParameters = {
  action: z
    .enum(BATCH_ACTIONS, {
      error: (issue) => `No batch action ${issue.input}; use ${BATCH_ACTIONS.join(', ')}`,
    })
    .describe('Batch control operation.'),
};

export const contract = endpointContract({
  auth: 'key',
  pathParameters,
  operations: {
    'POST /batches/{batch_id}/{action}': {
      operationId: 'controlBatch',
      summary: 'Pause, resume, cancel or retry a batch',
      description:
        'No body. `pause`: stop starting photos, the running ones finish (processing → paused). `resume`: start ' +
        'them again (paused → processing; it pauses again at once, with `pause_reason`, while credits are ' +
        'short). `cancel`: waiting photos are cancelled without reserving anything, running ones are cancelled ' +
        'and their credits released (processing or paused → cancelled). `retry`: only the failed photos wait ' +
        'again, each to become a new job with a new reservation (a completed batch processes again). ' +
        'Repeating pause, resume or cancel changes nothing and answers 200; any other move its status does not ' +
        'allow is 409, and so is a retry without failed photos.',
      tag: 'Batches',
      responses: { 200: json('BatchEnvelope', 'The batch after the action.') },
    },
  },
});
