import { GoneError, NotFoundError, PlateNotFoundError } from '../errors.ts';
import { resultPath } from '../jobs/envelope.ts';
import type { JobOutput, JobParams } from '../jobs/job.ts';
import type { Operation } from '../jobs/operations.ts';
import { outputKindOf } from '../jobs/operations.ts';
import type { ObjectStore, OperationRunner } from '../ports.ts';
import type { ResultFile } from './register-result-files.ts';

/** What the inference step needs to know; produced by `prepareJob`, consumed by `runInference`. */
export interface WorkOrder {
  jobId: string;
  /** Whose job it is: the inference cache tells a tenant only about its own earlier results. */
  ownerId?: string;
  operation: Operation;
  source: { key: string; contentType: string; sha256: string };
  params: JobParams;
  resultPrefix: string;
}

export interface InferenceResult {
  output: JobOutput;
  /** What settlement lists among the owner's files once the job has succeeded. */
  files: ResultFile[];
}

/**
 * The inference step.
 * 1. Read the source (and custom background) from storage; one that is no longer stored (expired, or deleted)
 *    is GoneError (410), which fails the job and releases its credits.
 * 2. Run the operation; with `require_plate`, a result that leaves a plate looking readable is
 *    PlateNotFoundError (803), which fails the job and releases its credits, before anything is stored.
 * 3. Store every produced file under the job's result prefix (the one copy: the inference cache points at
 *    it) and describe them as the job output.
 */
export async function runInference(
  deps: { objects: ObjectStore; runner: OperationRunner },
  order: WorkOrder,
): Promise<InferenceResult> {
  const [source, background] = await Promise.all([
    readInput(deps.objects, order.source.key),
    order.params.backgroundFileKey
      ? readInput(deps.objects, order.params.backgroundFileKey)
      : Promise.resolve(null),
  ]);
  const result = await deps.runner.run(order.operation, {
    source,
    sourceSha256: order.source.sha256,
    params: order.params,
    background,
    ...(order.ownerId ? { tenant: order.ownerId } : {}),
    resultPrefix: order.resultPrefix,
  });
  // Checked here, not in the operation: a cached result (computed without the option) is judged the same.
  if (order.params.requirePlate && result.plateHidden === false) {
    throw new PlateNotFoundError(
      'The car shows its front or rear but no license plate was found to hide (require_plate)',
    );
  }
  const output: JobOutput = {
    output_kind: outputKindOf(order.operation),
    inference_cached: result.inferenceCached,
    model_version: result.modelVersion,
  };
  const files: ResultFile[] = [];
  for (const file of result.files) {
    const key = `${order.resultPrefix}${file.name}`;
    await deps.objects.put(key, file.bytes, file.contentType);
    files.push({ name: file.name, key, contentType: file.contentType, bytes: file.bytes.length });
    for (const role of file.roles) output[role] = resultPath(order.jobId, file.name);
  }
  await result.stored?.();
  if (result.analysis) output.analysis = result.analysis;
  if (result.plates) {
    output.plates_detected = result.plates.length;
    output.plates = result.plates;
  }
  if (result.plateHidden !== undefined) output.plate_hidden = result.plateHidden;
  if (result.composition) output.composition = result.composition;
  return { output, files };
}

async function readInput(objects: ObjectStore, key: string): Promise<Buffer> {
  try {
    return await objects.get(key);
  } catch (error) {
    if (!(error instanceof NotFoundError)) throw error;
    throw new GoneError(
      'The photos of this job are no longer stored (expired or deleted); create a new job',
      {
        cause: error,
      },
    );
  }
}
