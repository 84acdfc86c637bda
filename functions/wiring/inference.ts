import { bucketAdapters } from '#aws/wiring.ts';
import { oncePerConfig } from '#config';

/** The inference function's composition root: the bucket only. It handles untrusted images and never sees the table. */
export const inferenceDeps = oncePerConfig((cfg) => ({
  config: cfg,
  ...bucketAdapters(cfg),
}));
