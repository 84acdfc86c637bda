import { httpCorrelation, observability } from '#aws/observability.ts';
import { apiHandlers } from '#http/api-handler.ts';
import { deps } from '#wiring/api.ts';

/**
 * The one shape of an API handler: `apiHandler(contract, fn)` over the API functions' observability and
 * wiring, so that a handler states only its contract and what it does with the request.
 */
export const apiHandler = apiHandlers({ observe: () => observability(httpCorrelation), deps });
