import { s3Client } from '#aws/clients.ts';
import { bucketAdapters } from '#aws/wiring.ts';
import { config } from '#config';

/** The inference function's composition root: the bucket only. It handles untrusted images and never sees the table. */
let instance:
  | { objects: ReturnType<typeof bucketAdapters>['objects']; config: ReturnType<typeof config> }
  | undefined;
export const inferenceDeps = () => {
  if (!instance) {
    const cfg = config();
    instance = { config: cfg, ...bucketAdapters(cfg, { s3: s3Client(cfg) }) };
  }
  return instance;
};
