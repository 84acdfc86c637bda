import { createHash } from 'node:crypto';
import type { CreditAccount } from '../credits/credits.ts';
import { BadRequestError, TransientError } from '../errors.ts';
import { replayDecision } from '../idempotency/idempotency.ts';
import { extensionOf } from '../images.ts';
import { newJobId, newSequence } from '../jobs/ids.ts';
import type { JobRequest } from '../jobs/input.ts';
import type { Job, JobRoute, StoredSource } from '../jobs/job.ts';
import { costOf } from '../jobs/operations.ts';
import { resolveParams } from '../jobs/params.ts';
import { accountOf, type Caller, defaultsOf, ownerIdOf } from '../keys/caller.ts';
import { webhookTargetProblem } from '../net/webhook-target.ts';
import type { AccountRepository, JobRepository, WorkflowStarter } from '../ports.ts';
import { storageKeys } from '../storage-layout.ts';
import { refuseUnlessAffordable } from './affordability.ts';
import { retryOwnJob, startOrFail } from './control-job.ts';
import { checkImage, readSourceImage, type SourceImageDeps, sha256 } from './source-image.ts';

export interface CreateJobDeps extends SourceImageDeps {
  jobs: JobRepository;
  accounts: AccountRepository;
  workflow: WorkflowStarter;
  /** Whether a `webhook_url` on loopback can be delivered to (the outbound address policy). */
  allowLoopback: boolean;
}

export interface CreateJobResult {
  status: 200 | 202;
  job: Job;
  /** An Idempotency-Key replay: the job was created by an earlier request, so this one created nothing. */
  replayed: boolean;
  /** The payer's balance once the job is in (its reservation made); null for the master key. */
  account: CreditAccount | null;
}

/**
 * Create a job.
 * 0. Refuse (400) a webhook_url that could never be delivered to, and (402) a caller whose balance cannot cover the job, before any fetch, decode or write.
 * 1. Resolve the source bytes (upload or URL) and check they are an accepted image.
 * 2. Resolve effective parameters: request over key defaults over service defaults.
 * 3. On a repeated Idempotency-Key, return the original job (or 409 for a different request); one that failed
 *    before it ever ran (its workflow could not be started: the 503 below) is started again, as a retry would.
 * 4. Store the source, then reserve credits, store the job and claim the key in one atomic write.
 * 5. Start the workflow; if that fails, fail the job and release its credits so nothing is stuck.
 * 6. Return the job with its payer's balance, which every answer to the creation shows.
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
    if (replay) return withBalance(deps, await startedAgainIfNeverRan(deps, caller, replay));
  }

  const webhookUrl = request.requested.webhookUrl;
  const problem =
    webhookUrl && (await webhookTargetProblem(webhookUrl, { allowLoopback: deps.allowLoopback }));
  if (problem) throw new BadRequestError(problem);

  // Nothing is fetched, decoded or stored for a caller who could not pay for the job anyway.
  const account = accountOf(caller);
  const cost = costOf(request.operation);
  await refuseUnlessAffordable(deps.accounts, caller, cost, `This operation needs ${cost} credits`);

  const source = await readSourceImage(deps, caller, request.source);
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
  const dropStoredFiles = async () => {
    await deps.objects.delete(sourceKey);
    if (backgroundKey) await deps.objects.delete(backgroundKey);
  };
  // A refused insert (429 jobs in flight, 402 a balance spent by a concurrent job) leaves no job to own them.
  const outcome = await deps.jobs.insert(job, reservation, claim).catch(async (error: unknown) => {
    await dropStoredFiles();
    throw error;
  });
  if (!outcome.inserted) {
    // Lost a race with an identical request: the other one owns the key, so drop our copy.
    await dropStoredFiles();
    const replay = await findReplay(deps, claim!.scope, claim!.key, fingerprint);
    if (replay) return withBalance(deps, replay);
    throw new TransientError('Idempotency record vanished during a concurrent request; retry');
  }

  await startOrFail(deps, job, 1);
  return withBalance(deps, { status: 202, job, replayed: false });
}

async function withBalance(
  deps: CreateJobDeps,
  result: Omit<CreateJobResult, 'account'>,
): Promise<CreateJobResult> {
  return { ...result, account: result.job.account ? await deps.accounts.get(result.job.account) : null };
}

/**
 * The key promises one job, not one failed start: a job that failed before it ever ran produced nothing and
 * charged nothing, and the 503 that reported it invited the client to repeat the request. Batch items are
 * never created under a key, so `retryOwnJob`'s refusals (410 for gone photos, 402) are the only new answers.
 */
async function startedAgainIfNeverRan(
  deps: CreateJobDeps,
  caller: Caller,
  replay: Omit<CreateJobResult, 'account'>,
): Promise<Omit<CreateJobResult, 'account'>> {
  if (replay.job.status !== 'failed' || replay.job.startedAt !== null) return replay;
  const again = await retryOwnJob(deps, caller, replay.job.id);
  return { ...again, replayed: true };
}

async function findReplay(deps: CreateJobDeps, scope: string, key: string, fingerprint: string) {
  const record = await deps.jobs.findIdempotent(scope, key);
  if (!record) return null;
  const original = await deps.jobs.get(record.jobId);
  if (!original) return null;
  return { status: replayDecision(record, fingerprint, original).status, job: original, replayed: true };
}

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
