import { oncePerConfig } from '#config';
import { deps } from './api.ts';
import { withBatchHooks } from './batch.ts';

/**
 * `deps()` plus the hooks batches add (batch.ts), for the batch endpoints only: a module of its own, since
 * a module-level call stays in every bundle that imports its module, and the other API functions would
 * load the batch use cases at each cold start.
 */
export const batchDeps = oncePerConfig(() => withBatchHooks(deps()));
