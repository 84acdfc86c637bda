import type { Operation, OutputKind } from './operations.ts';

/** The operations and what each costs and outputs: ./operations.ts. */
export type { Operation } from './operations.ts';

export const JOB_STATUSES = ['queued', 'processing', 'paused', 'success', 'failed', 'cancelled'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

/**
 * Where inside the pipeline a job is; finer-grained than `status` (spec 2.2 leaves the values to us).
 * Exactly the stages the transitions set (transitions.ts, create-job): the OpenAPI enum is this list.
 */
export const JOB_STAGES = ['queued', 'preparing', 'done'] as const;
export type JobStage = (typeof JOB_STAGES)[number];

export const BACKGROUND_PRESETS = ['studio', 'warm', 'graphite', 'showroom'] as const;
export type BackgroundPreset = (typeof BACKGROUND_PRESETS)[number];

export const TERMINAL_STATUSES: ReadonlySet<JobStatus> = new Set(['success', 'failed', 'cancelled']);
export const isTerminal = (status: JobStatus): boolean => TERMINAL_STATUSES.has(status);

/** Effective parameters after request > key default > service default resolution. */
export interface JobParams {
  plateColor: string;
  plateSmoothing: boolean;
  plateMaskOnly: boolean;
  background: BackgroundPreset | null;
  /** Storage key of a custom background image (request upload or the key's stored file). */
  backgroundFileKey: string | null;
  webhookUrl: string | null;
}

export interface StoredSource {
  key: string;
  contentType: string;
  bytes: number;
  sha256: string;
  originalName: string | null;
}

export interface JobOutput {
  url?: string;
  plate_mask_url?: string;
  background_mask_url?: string;
  mask_url?: string;
  analysis?: Record<string, unknown>;
  output_kind: OutputKind;
  inference_cached: boolean;
  model_version: Record<string, string>;
  plates_detected?: number;
}

export interface JobError {
  code: number;
  message: string;
}

/** Who pays: the ledger entry that a job's reservation was taken from. `null` for the master key. */
export type AccountRef = string | null;

export type JobRoute = 'jobs' | 'process' | 'analyze';

export interface Job {
  id: string;
  /** Monotonic int64 used as the listing cursor (`before`). */
  seq: number;
  ownerId: string;
  account: AccountRef;
  route: JobRoute;
  operation: Operation;
  status: JobStatus;
  stage: JobStage;
  cancelRequested: boolean;
  costCredits: number;
  /** What was actually taken from the account at creation (0 for the master key). */
  reservedCredits: number;
  chargedCredits: number;
  attempts: number;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  params: JobParams;
  source: StoredSource;
  output: JobOutput | null;
  error: JobError | null;
  idempotencyKey: string | null;
  /** How many times the owner retried this job after a failure; each retry is a new execution. */
  retries: number;
  /** Optimistic-lock counter: every stored change increments it. */
  version: number;
  /** Set on the job of a batch item: which batch, which of its items. */
  batch?: { id: string; item: number };
}
