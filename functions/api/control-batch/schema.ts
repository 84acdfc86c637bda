/** The contract of POST /batches/{batch_id}/{action}: its route entries in the OpenAPI document. */
import { endpointContract, json } from '#http/openapi.ts';

export const contract = endpointContract({
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
      auth: 'key',
      responses: { 200: json('BatchEnvelope', 'The batch after the action.') },
    },
  },
});
