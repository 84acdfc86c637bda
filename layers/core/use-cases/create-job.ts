import { createHash } from 'node:crypto';
import { costOf } from '../credits/credits.ts';
import {
  BadRequestError,
  PayloadTooLargeError,
  TransientError,
  UnsupportedMediaTypeError,
} from '../errors.ts';
import { openAsset } from '../files/assets.ts';
import { replayDecision } from '../idempotency/idempotency.ts';
import { imageProblem } from '../image-limits.ts';
import { extensionOf, sniffImageType } from '../images.ts';
import { newJobId, newSequence } from '../jobs/ids.ts';
import type { JobRequest, UploadedFile } from '../jobs/input.ts';
import type { Job, JobRoute, StoredSource } from '../jobs/job.ts';
import { resolveParams } from '../jobs/params.ts';
import { accountOf, type Caller, defaultsOf, ownerIdOf } from '../keys/caller.ts';
import { webhookTargetProblem } from '../net/address-policy.ts';
import type {
  AccountRepository,
  AssetRepository,
  Clock,
  JobRepository,
  ObjectStore,
  UploadRepository,
  UploadTargets,
  WorkflowStarter,
} from '../ports.ts';
import { storageKeys } from '../storage-layout.ts';
import { refuseUnlessAffordable } from './affordability.ts';
import { startOrFail } from './control-job.ts';
import { readUploadedPhoto } from './uploads.ts';

export interface CreateJobDeps {
  jobs: JobRepository;
  accounts: AccountRepository;
  objects: ObjectStore;
  workflow: WorkflowStarter;
  clock: Clock;
  /** Download a source image from a caller-supplied URL, enforcing the outbound rules. */
  fetchSource(url: string): Promise<UploadedFile>;
  maxSourceBytes: number;
  /** Where `asset_id` sources are looked up. */
  assets: AssetRepository;
  /** Where `upload_id` sources are looked up; without them `upload_id` is refused. */
  uploads?: UploadRepository;
  /** Largest photo by upload. */
  maxPhotoBytes?: number;
  /** Whether a `webhook_url` on loopback can be delivered to (the outbound address policy). */
  allowLoopback: boolean;
}

export interface CreateJobResult {
  status: 200 | 202;
  job: Job;
}

/**
 * Create a job.
 * 0. Refuse (400) a webhook_url that could never be delivered to, and (402) a caller whose balance cannot cover the job, before any fetch, decode or write.
 * 1. Resolve the source bytes (upload or URL) and check they are an accepted image.
 * 2. Resolve effective parameters: request over key defaults over service defaults.
 * 3. On a repeated Idempotency-Key, return the original job (or 409 for a different request).
 * 4. Store the source, then reserve credits, store the job and claim the key in one atomic write.
 * 5. Start the workflow; if that fails, fail the job and release its credits so nothing is stuck.
 */
export async function createJob(
  deps: CreateJobDeps,
  caller: Caller,
  request: JobRequest,
  options: { route: JobRoute; idempotencyKey: string | null },
): Promise<CreateJobResult> {
  const ownerId = ownerIdOf(caller);
  const fingerprint = fingerprintOf(options.route, request);
  const claim = options.idempotencyKey ? { scope: ownerId, key: options.idempotencyKey, fingerprint } : null;
  if (claim) {
    const replay = await findReplay(deps, claim.scope, claim.key, fingerprint);
    if (replay) return replay;
  }

  const webhookUrl = request.requested.webhookUrl;
  const problem = webhookUrl && webhookTargetProblem(webhookUrl, { allowLoopback: deps.allowLoopback });
  if (problem) throw new BadRequestError(problem);

  // Nothing is fetched, decoded or stored for a caller who could not pay for the job anyway.
  const account = accountOf(caller);
  const cost = costOf(request.operation);
  await refuseUnlessAffordable(deps.accounts, caller, cost, `This operation needs ${cost} credits`);

  const source = await loadSource(deps, caller, request);
  const background = request.backgroundFile
    ? checkImage(deps, request.backgroundFile, 'background_file')
    : null;

  const now = deps.clock.now();
  const jobId = newJobId();
  const sourceKey = storageKeys.source(jobId, extensionOf(source.type));
  const backgroundKey = background ? storageKeys.jobBackground(jobId, extensionOf(background.type)) : null;
  const job: Job = {
    id: jobId,
    seq: newSequence(now.getTime()),
    ownerId,
    account,
    route: options.route,
    operation: request.operation,
    status: 'queued',
    stage: 'queued',
    cancelRequested: false,
    costCredits: cost,
    reservedCredits: account ? cost : 0,
    chargedCredits: 0,
    attempts: 0,
    createdAt: now.toISOString(),
    startedAt: null,
    finishedAt: null,
    params: resolveParams(
      { ...request.requested, ...(backgroundKey ? { backgroundFileKey: backgroundKey } : {}) },
      defaultsOf(caller),
    ),
    source: {
      key: sourceKey,
      contentType: source.type,
      bytes: source.file.bytes.length,
      sha256: source.sha256,
      originalName: source.file.filename,
    } satisfies StoredSource,
    output: null,
    error: null,
    idempotencyKey: options.idempotencyKey,
    retries: 0,
    version: 1,
  };

  await deps.objects.put(sourceKey, source.file.bytes, source.type);
  if (background && backgroundKey)
    await deps.objects.put(backgroundKey, background.file.bytes, background.type);

  const reservation = account
    ? { account, amount: cost, kind: 'reserve' as const, jobId: job.id, jobVersion: job.version }
    : null;
  const outcome = await deps.jobs.insert(job, reservation, claim);
  if (!outcome.inserted) {
    // Lost a race with an identical request: the other one owns the key, so drop our copy.
    await deps.objects.delete(sourceKey);
    if (backgroundKey) await deps.objects.delete(backgroundKey);
    const replay = await findReplay(deps, claim!.scope, claim!.key, fingerprint);
    if (replay) return replay;
    throw new TransientError('Idempotency record vanished during a concurrent request; retry');
  }

  await startOrFail(deps, job, 1);
  return { status: 202, job };
}

async function findReplay(deps: CreateJobDeps, scope: string, key: string, fingerprint: string) {
  const record = await deps.jobs.findIdempotent(scope, key);
  if (!record) return null;
  const original = await deps.jobs.get(record.jobId);
  if (!original) return null;
  return { status: replayDecision(record, fingerprint, original).status, job: original };
}

export interface CheckedImage {
  file: UploadedFile;
  type: NonNullable<ReturnType<typeof sniffImageType>>;
  sha256: string;
}

export function checkImage(
  deps: { maxSourceBytes: number },
  file: UploadedFile,
  field: string,
): CheckedImage {
  if (file.bytes.length > deps.maxSourceBytes) {
    throw new PayloadTooLargeError(`${field} is larger than ${deps.maxSourceBytes} bytes`);
  }
  const type = sniffImageType(file.bytes);
  if (!type) throw new UnsupportedMediaTypeError(`${field} is not a JPG, PNG or WEBP image`);
  const problem = imageProblem(file.bytes, field);
  if (problem) throw problem;
  return { file, type, sha256: sha256(file.bytes) };
}

/** An `upload_id` source: a completed photo upload of the caller, under the photo limits of uploads. */
export async function uploadedImage(
  deps: CreateJobDeps & { objects: ObjectStore & UploadTargets },
  caller: Caller,
  uploadId: string,
): Promise<CheckedImage> {
  if (!deps.uploads) throw new BadRequestError('upload_id is not accepted here');
  const file = await readUploadedPhoto(
    { uploads: deps.uploads, objects: deps.objects, clock: deps.clock },
    caller,
    uploadId,
  );
  return checkImage({ maxSourceBytes: deps.maxPhotoBytes ?? deps.maxSourceBytes }, file, 'upload_id');
}

async function loadSource(deps: CreateJobDeps, caller: Caller, request: JobRequest): Promise<CheckedImage> {
  switch (request.source.kind) {
    case 'file':
      return checkImage(deps, request.source.file, 'file');
    case 'url':
      return checkImage(deps, await deps.fetchSource(request.source.url), 'url');
    case 'asset':
      // A copy becomes the job's own source, so deleting the asset later cannot break a queued job.
      return checkImage(deps, await openAsset(deps, caller, request.source.assetId), 'asset_id');
    case 'upload':
      // A copy too: the upload may be used again, and expires on its own schedule.
      return uploadedImage(
        deps as CreateJobDeps & { objects: ObjectStore & UploadTargets },
        caller,
        request.source.uploadId,
      );
  }
}

const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

/** Identifies "the same request" for Idempotency-Key: uploads by content, URLs and assets by reference. */
function fingerprintOf(route: JobRoute, request: JobRequest): string {
  const canonical = JSON.stringify({
    route,
    operation: request.operation,
    requested: request.requested,
    source: request.source.kind === 'file' ? { sha256: sha256(request.source.file.bytes) } : request.source,
    background: request.backgroundFile ? sha256(request.backgroundFile.bytes) : null,
  });
  return createHash('sha256').update(canonical).digest('hex');
}
