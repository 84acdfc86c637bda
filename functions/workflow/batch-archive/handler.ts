import middy from '@middy/core';
import { observability } from '#aws/observability.ts';
import { jobErrorFromFailure } from '#core/errors.ts';
import type { ArchiveTask } from '#core/ports.ts';
import { buildDownload } from '#core/use-cases/download-batch.ts';
import { failUnpacking, unpackBatch } from '#core/use-cases/unpack-batch.ts';
import { archiveDeps } from '#wiring/workflow.ts';

/** The archive workflow's failure path: `failure` is what the Catch put there ({Error, Cause}). */
type ArchiveEvent =
  | ArchiveTask
  | (ArchiveTask & { failed: true; failure?: { Error?: string; Cause?: string } });

/** The archive workflow's task: unpack a new batch's archive, or build a batch's download. */
export const handler = middy<ArchiveEvent, { batchId: string; status: string | null }>()
  .use(observability((event: ArchiveEvent) => ({ batchId: event.batchId })))
  .handler(async (event) => {
    const deps = archiveDeps();
    if ('failed' in event) {
      if (event.task !== 'unpack') return { batchId: event.batchId, status: null };
      const batch = await failUnpacking(
        deps,
        event.batchId,
        jobErrorFromFailure(event.failure, 'The archive could not be unpacked'),
      );
      return { batchId: event.batchId, status: batch?.status ?? null };
    }
    if (event.task === 'unpack') {
      const batch = await unpackBatch({ ...deps, maxSourceBytes: deps.maxPhotoBytes }, event.batchId);
      return { batchId: event.batchId, status: batch?.status ?? null };
    }
    await buildDownload(deps, event.batchId);
    return { batchId: event.batchId, status: 'built' };
  });
