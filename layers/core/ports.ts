import type { Batch, BatchItem } from './batches/batch.ts';
import type { CreditAccount } from './credits/credits.ts';
import type { LedgerEntry } from './credits/ledger.ts';
import type { Asset } from './files/asset-record.ts';
import type { FileRecord } from './files/files.ts';
import type { IdempotencyRecord } from './idempotency/idempotency.ts';
import type { Composition, Job, JobParams, JobStatus, PlateFound } from './jobs/job.ts';
import type { Operation } from './jobs/operations.ts';
import type { ApiKeyRecord, KeyDefaults } from './keys/api-key.ts';
import type { ZipBudget, ZipEntry, ZipLimits, ZipListing } from './limits/archive.ts';
import type { RateWindow } from './limits/rate.ts';
import type { Upload } from './uploads/upload.ts';
import type { Delivery, DeliveryAttempt, WebhookEventName } from './webhooks/delivery.ts';
import type { WebhookSecret } from './webhooks/signature.ts';

/** A credit movement that must happen in the same atomic write as the job change it belongs to. */
export interface CreditMovement {
  account: string;
  amount: number;
  kind: 'reserve' | 'charge' | 'release';
  /** The job the credits move for; with `jobVersion` it names the ledger entry, so it is written once. */
  jobId: string;
  jobVersion: number;
}

export interface IdempotencyClaim {
  scope: string;
  key: string;
  fingerprint: string;
}

type InsertOutcome = { inserted: true } | { inserted: false; existing: IdempotencyRecord };

/** Jobs and the credits that move with them. Every write is atomic with its credit movement. */
export interface JobRepository {
  get(jobId: string): Promise<Job | null>;
  findIdempotent(scope: string, key: string): Promise<IdempotencyRecord | null>;
  /**
   * Store a new job, reserve its credits and claim its idempotency key, all or nothing.
   * @throws InsufficientCreditsError when the account cannot cover the reservation.
   */
  insert(
    job: Job,
    reservation: CreditMovement | null,
    claim: IdempotencyClaim | null,
  ): Promise<InsertOutcome>;
  /**
   * Replace `before` with `after` only if nobody changed the job meanwhile, together with `movement`.
   * @returns false when the job had changed (the caller re-reads and decides again).
   */
  update(before: Job, after: Job, movement: CreditMovement | null): Promise<boolean>;
  /** The owner's jobs, newest first, strictly older than `before` (a job `seq`). */
  listByOwner(ownerId: string, page: JobPage): Promise<{ jobs: Job[]; nextCursor: number | null }>;
}

interface JobPage {
  limit: number;
  before: number | null;
  status: JobStatus | null;
}

export interface AccountRepository {
  get(account: string): Promise<CreditAccount | null>;
  /** Open an account with a starting balance unless it exists; returns whether it was opened now. */
  open(account: string, credits: number): Promise<boolean>;
  /** Every credit movement of the account, oldest first. */
  ledger(account: string): Promise<LedgerEntry[]>;
}

/** Server-side state behind guest trial sessions. */
export interface GuestRepository {
  /** The secret that signs session cookies, created on first use and shared by every function. */
  signingSecret(): Promise<string>;
  /** Count a new session for an address and day; false when the address already had `max` today. */
  admitNewSession(address: string, day: string, max: number): Promise<boolean>;
}

/** Requests per client and window (layers/core/limits/rate.ts), shared by every function. */
export interface RequestCounter {
  /** Counts one request of `client` in `window`; false, counting nothing, when it already had `window.max`. */
  admit(client: string, window: RateWindow): Promise<boolean>;
}

export interface ApiKeyRepository {
  findById(keyId: string): Promise<ApiKeyRecord | null>;
  create(record: ApiKeyRecord, credits: number): Promise<void>;
  updateDefaults(keyId: string, defaults: KeyDefaults): Promise<void>;
}

export interface ObjectStore {
  put(key: string, body: Buffer, contentType: string): Promise<void>;
  /**
   * @throws NotFoundError when storage says there is no such object; a role that may list only some
   * prefixes may be refused instead (docs/aws-parity.md), so where a miss is expected ask `exists` first.
   */
  get(key: string): Promise<Buffer>;
  /** Whether an object is stored under exactly `key`. */
  exists(key: string): Promise<boolean>;
  delete(key: string): Promise<void>;
  /** A time-limited URL that lets anyone holding it read the object. */
  /** `downloadName`: the file name a browser saves it under (Content-Disposition of the answer). */
  presignGet(key: string, expiresInSeconds: number, options?: { downloadName?: string }): Promise<string>;
}

export interface WorkflowStarter {
  /**
   * Start a run of the job's workflow, named after the attempt. The workflow is Express: a second start
   * of the same attempt is a second run, which the steps leave without effect.
   */
  start(jobId: string, attempt: number): Promise<void>;
}

/** The Standard follow-up of a job's run: its webhook delivered, and retried on the schedule, without the run. */
export interface FollowUpStarter {
  /**
   * Hand the attempt's delivery to a follow-up named after the run, so its delivery and event ids are the run's.
   * A follow-up already started for that run (the run handed its delivery or settlement over) is left as it is.
   */
  deliver(jobId: string, attempt: number): Promise<void>;
}

export interface Clock {
  now(): Date;
}

/** Uploaded source images kept for reuse as job sources (spec 2.5). */
export interface AssetRepository {
  /** Store the asset together with the File record that lists it, or neither. */
  insert(asset: Asset, file: FileRecord): Promise<void>;
  /**
   * The asset, also when past `expiresAt` (the use case answers 410 for those); null when unknown,
   * deleted, or so long expired that its record is gone.
   */
  get(assetId: string): Promise<Asset | null>;
}

/** The caller-visible files (spec 2.6): uploaded assets and the result files of successful jobs. */
export interface FileRepository {
  /** A new file id from an atomic counter: unique and increasing, not gap-free. */
  nextId(): Promise<number>;
  /** Store a result file's record; false when the same job already registered a file of that name. */
  insertResult(file: FileRecord): Promise<boolean>;
  /** null when unknown, deleted or expired. */
  get(fileId: number): Promise<FileRecord | null>;
  /**
   * What became of the result file `name` of a job: `listed` while its record lasts, `deleted` once its owner
   * deleted it (or it expired), null when it was never registered (a job that settled before results were).
   */
  resultState(jobId: string, name: string): Promise<'listed' | 'deleted' | null>;
  /**
   * Unexpired files with an id below `before`, newest first, at most `limit`.
   * `ownerId` null lists every owner's files.
   */
  list(ownerId: string | null, before: number | null, limit: number): Promise<FileRecord[]>;
  /**
   * Remove the record, and for an asset's file the asset with it, in one write.
   * @returns false when it was already gone.
   */
  delete(file: FileRecord): Promise<boolean>;
}

/** Signing secrets of API keys' webhooks (docs/webhooks.md). */
export interface WebhookSecretRepository {
  /** The key's secrets with a version for `replace`; an empty list and version 0 when it has none. */
  get(keyId: string): Promise<{ secrets: WebhookSecret[]; version: number }>;
  /** Store `secrets` if the stored version is still `version`; false when someone else wrote first. */
  replace(keyId: string, secrets: WebhookSecret[], version: number): Promise<boolean>;
}

/** Webhook deliveries, their attempt log, and which job events went out. */
export interface DeliveryRepository {
  /** Store a new delivery; when one with its id exists already, return that one unchanged. */
  open(delivery: Delivery): Promise<Delivery>;
  get(jobId: string, deliveryId: string): Promise<Delivery | null>;
  /** Count one more attempt of the delivery atomically and return its number (1, 2, ...). */
  nextAttempt(jobId: string, deliveryId: string, at: string): Promise<number>;
  record(attempt: DeliveryAttempt): Promise<void>;
  /** Move a pending delivery to `delivered` or `failed`; a finished one keeps its status. */
  finish(jobId: string, deliveryId: string, status: 'delivered' | 'failed', at: string): Promise<void>;
  /** Every delivery of the job, newest first, each with its attempts in order. */
  list(jobId: string): Promise<Array<{ delivery: Delivery; attempts: DeliveryAttempt[] }>>;
  wasPublished(jobId: string, eventId: string): Promise<boolean>;
  markPublished(jobId: string, eventId: string, at: string): Promise<void>;
}

/** A job's terminal event, as routed by EventBridge rules (docs/webhooks.md). */
export interface JobEvent {
  eventId: string;
  event: WebhookEventName;
  jobId: string;
  ownerId: string;
  status: string;
  occurredAt: string;
  /** The final job JSON, as polling returns it. */
  job: unknown;
}

export interface EventPublisher {
  /** Put the event on the bus. @throws TransientError when the bus refused it. */
  publish(event: JobEvent): Promise<void>;
}

/** Sends one webhook request. */
export interface WebhookSender {
  /**
   * POST `body` once to a vetted public address, without following redirects. Resolves with what happened;
   * a receiver that fails, times out or cannot be reached is an outcome, not an exception.
   */
  post(
    url: string,
    headers: Record<string, string>,
    body: string,
  ): Promise<{ statusCode: number | null; error: string | null; latencyMs: number }>;
}

/** Large objects moved piece by piece (a batch's result archive), never held whole in memory. */
export interface ObjectStreams {
  /** The object's bytes as they arrive. @throws NotFoundError as `ObjectStore.get` does. */
  getStream(key: string): Promise<AsyncIterable<Uint8Array>>;
  /**
   * Store a body produced piece by piece (a multipart upload in parts of at least 5 MiB); on failure
   * nothing is stored under `key`.
   */
  putStream(
    key: string,
    body: AsyncIterable<Uint8Array>,
    options: { contentType: string; contentDisposition?: string },
  ): Promise<{ bytes: number }>;
}

/** Batches (docs/decisions/0032-batches-are-jobs-driven-by-settlement.md): one record with the lists that move, plus one record per item. */
export interface BatchRepository {
  /** Store a new batch and its items; the items go first, so a batch is never read without them. */
  create(batch: Batch, items: BatchItem[]): Promise<void>;
  get(batchId: string): Promise<Batch | null>;
  /** Every item, in index order. */
  items(batchId: string): Promise<BatchItem[]>;
  item(batchId: string, index: number): Promise<BatchItem | null>;
  /**
   * Replace `before` with `after` only if nobody changed the batch meanwhile, in one atomic write with
   * an item's new record and a started item's job, inserted with its reservation exactly as a job
   * created over the API. The stored batch gets version `before.version + 1`, whatever `after` says.
   * @returns false when the batch had changed (the caller re-reads and decides again).
   * @throws InsufficientCreditsError (402) or TooManyRequestsError (429) when the reservation is refused.
   */
  update(before: Batch, after: Batch, changes?: BatchChanges): Promise<boolean>;
  /**
   * Store (or store again) items of an existing batch. They are read only once the batch lists them, so
   * an unpacking step that runs twice writes the same records twice, harmlessly.
   */
  putItems(items: BatchItem[]): Promise<void>;
}

/** What moves together with a batch record. */
export interface BatchChanges {
  item?: BatchItem;
  start?: { job: Job; reservation: CreditMovement | null };
}

/** A ZIP archive in storage, opened for reading: its checked directory, and its entries one by one. */
export interface OpenedArchive {
  listing: ZipListing;
  /** The archive's own size in bytes. */
  bytes: number;
  /**
   * One entry's bytes as they inflate, charged to `budget`. Ends with an error when the entry is
   * unreadable or does not match its CRC-32 or size (ZipEntryError), or grows past a limit
   * (PayloadTooLargeError). Stopping early is allowed: the rest is never read.
   */
  entry(entry: ZipEntry, budget: ZipBudget): AsyncIterable<Buffer>;
  close(): Promise<void>;
}

/** Reads untrusted ZIP archives from storage by ranges: never the whole archive in memory. */
export interface ArchiveReader {
  /**
   * Read and check the archive's central directory under `limits` (layers/core/limits/archive.ts).
   * @throws NotFoundError when there is no such object.
   * @throws UnsupportedMediaTypeError (415) when it is not a ZIP archive at all.
   * @throws BadRequestError (400) for a malformed archive or an unsafe entry.
   * @throws PayloadTooLargeError (413) naming the limit.
   */
  open(key: string, limits: ZipLimits): Promise<OpenedArchive>;
}

/** One file of an archive being written. */
export interface ZipSource {
  /** Relative path inside the archive, `/`-separated. */
  name: string;
  /** The bytes, or the bytes as they arrive (an object streamed from storage). */
  data: Buffer | AsyncIterable<Uint8Array>;
  /** Deflate it; already-compressed formats (JPEG, PNG, WEBP) are stored as they are. */
  compress: boolean;
  modified?: Date;
}

/** Writes ZIP archives as a stream (ZIP64 when needed), one entry at a time. */
export interface ArchiveWriter {
  /** The archive's bytes, produced as the entries are consumed; a failing source fails the stream. */
  zip(entries: AsyncIterable<ZipSource> | Iterable<ZipSource>): AsyncIterable<Buffer>;
}

/** What the archive workflow runs: unpack a new batch's archive, or build a batch's download. */
export type ArchiveTask = { task: 'unpack'; batchId: string } | { task: 'download'; batchId: string };

/** Executions of the archive workflow, one per name. */
export interface ArchiveWorkflow {
  /**
   * Start `task` under `name` unless an execution of that name exists already.
   * @returns the state of the execution of that name, new or old.
   */
  start(name: string, task: ArchiveTask): Promise<'running' | 'succeeded' | 'failed'>;
}

/** Direct uploads (POST /uploads) and their records. */
export interface UploadRepository {
  insert(upload: Upload): Promise<void>;
  /** The upload, also when expired (the use case answers 410); null when unknown or long forgotten. */
  get(uploadId: string): Promise<Upload | null>;
}

/** Where clients send files themselves, and what arrived there. */
export interface UploadTargets {
  /**
   * A time-limited URL that lets anyone holding it PUT one object of exactly this type and size under
   * `key` (both are signed: storage refuses anything else).
   */
  presignPut(
    key: string,
    object: { contentType: string; bytes: number },
    expiresInSeconds: number,
  ): Promise<string>;
  /** The stored object's size, or null when nothing is stored under `key`. */
  sizeOf(key: string): Promise<number | null>;
}

/** What became of a job's execution, for the sweeper. */
/** Work that has not reached its end: what the sweeper looks through. */
export interface ActiveWork {
  /** Jobs queued or processing. */
  activeJobs(): Promise<Job[]>;
  /** Batches unpacking or processing. */
  activeBatches(): Promise<Batch[]>;
}

// ---------------------------------------------------------------- inference

/** Which field of the job output a produced file is published under. */
export type OutputRole = 'url' | 'plate_mask_url' | 'background_mask_url' | 'mask_url';

export interface OperationResult {
  files: Array<{ name: string; roles: OutputRole[]; bytes: Buffer; contentType: string }>;
  analysis?: Record<string, unknown>;
  modelVersion: Record<string, string>;
  inferenceCached: boolean;
  /** The plates the operation filled or (`background`) found, in the result image's pixels. */
  plates?: PlateFound[];
  /** Background operations: whether no plate looks left readable (JobOutput.plate_hidden). */
  plateHidden?: boolean;
  /** Background operations: where the car was put and what was decided (`JobOutput.composition`). */
  composition?: Composition;
  /** Called once the caller has stored `files` under the `resultPrefix` it passed (the inference cache). */
  stored?: () => Promise<void>;
}

/** What every operation receives: the photo, its parameters and the custom background. */
export interface OperationInput {
  source: Buffer;
  sourceSha256: string;
  params: JobParams;
  background: Buffer | null;
  /** The job's owner; only the inference cache reads it. */
  tenant?: string;
  /** Where the caller stores the produced files; the inference cache points at them there. */
  resultPrefix?: string;
}

/** The vision engine behind the inference step; one implementation per model runtime. */
export interface OperationRunner {
  run(operation: Operation, input: OperationInput): Promise<OperationResult>;
}
