import type { Operation, OutputKind } from './operations.ts';

/** The operations and what each costs and outputs: ./operations.ts. */

export const JOB_STATUSES = ['queued', 'processing', 'paused', 'success', 'failed', 'cancelled'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

/**
 * Where inside the pipeline a job is; finer-grained than `status` (spec 2.2 leaves the values to us).
 * Exactly the stages the transitions set (transitions.ts, create-job): the OpenAPI enum is this list.
 */
export const JOB_STAGES = ['queued', 'preparing', 'done'] as const;
type JobStage = (typeof JOB_STAGES)[number];

export const BACKGROUND_PRESETS = ['studio', 'warm', 'graphite', 'showroom'] as const;
export type BackgroundPreset = (typeof BACKGROUND_PRESETS)[number];

/** What `background` accepts: a drawn preset, or `transparent` (the car alone, a PNG with alpha). */
export const BACKGROUNDS = [...BACKGROUND_PRESETS, 'transparent'] as const;
export type Background = (typeof BACKGROUNDS)[number];

/** Encodings of a result image; null (not sent) keeps the source's: JPEG for JPEG and WEBP, PNG for PNG. */
export const OUTPUT_FORMATS = ['jpg', 'png', 'webp'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** Qualities of the lossy encodings (layers/vision/image-io.ts says why these). */
export const OUTPUT_QUALITY = { jpg: 92, webp: 90 } as const;

/** Bounds of `max_width` in pixels; a result is never made wider than its photo. */
export const MAX_WIDTH_RANGE = { min: 64, max: 16384 } as const;

/**
 * Where the car stands in a background result: `keep` where the photo has it, `center` scaled to a set
 * share of the frame's width, centred, wheels on the floor line. Unset: `center` for `studio_background`,
 * `keep` for `background` (FRAMING_DEFAULTS).
 */
export const FRAMINGS = ['keep', 'center'] as const;
export type Framing = (typeof FRAMINGS)[number];
export const FRAMING_DEFAULTS = {
  background: 'keep',
  studio_background: 'center',
} as const satisfies Partial<Record<Operation, Framing>>;

export interface FramingTarget {
  /** The car's box fills this share of the frame's width (the stated share of `framing: center`). */
  readonly widthShare: number;
  /** ...unless its height would then pass this share of the frame's height (a tall van, a portrait photo). */
  readonly maxHeightShare: number;
  /** The floor line, where the wheels stand, as a share of the frame's height from the top. */
  readonly floorLine: number;
  /**
   * The car is never enlarged more than this: a small car in a large photo would come out soft. Past it,
   * it is centred at this scale and fills less of the width.
   */
  readonly maxUpscale: number;
}

/**
 * Most of the width with equal air each side, as dealer studio shots are composed; the wheels low enough
 * to leave floor in front of the car for its shadow and the reflection of a preset.
 */
export const CENTER_FRAMING: FramingTarget = {
  widthShare: 0.8,
  maxHeightShare: 0.72,
  floorLine: 0.88,
  maxUpscale: 2.5,
};

/**
 * The canvas of a centred car (`framing: center`), width:height; `keep` is the photo's own shape. Unset:
 * CENTER_ASPECT_DEFAULT. The canvas has the photo's pixel count, so a landscape photo of that shape keeps
 * its size and a portrait one turns landscape (docs/decisions/0029-canvas-and-framing.md).
 */
export const ASPECTS = ['keep', '4:3', '3:2', '16:9', '1:1'] as const;
export type Aspect = (typeof ASPECTS)[number];
/** 4:3 landscape: the shape listing sites show a vehicle's gallery in, and most cameras take. */
export const CENTER_ASPECT_DEFAULT: Aspect = '4:3';

const TERMINAL_STATUSES: ReadonlySet<JobStatus> = new Set(['success', 'failed', 'cancelled']);
export const isTerminal = (status: JobStatus): boolean => TERMINAL_STATUSES.has(status);

/** Effective parameters after request > key default > service default resolution. */
export interface JobParams {
  plateColor: string;
  plateSmoothing: boolean;
  plateMaskOnly: boolean;
  background: Background | null;
  /** Storage key of a custom background image (request upload or the key's stored file). */
  backgroundFileKey: string | null;
  webhookUrl: string | null;
  /** `require_plate`: a car showing its front or rear with no plate hidden fails the job (803). */
  requirePlate?: boolean;
  /** Encoding of the result image; null or absent (jobs made before it existed): the source's. */
  format?: OutputFormat | null;
  /** Results wider than this are scaled down to it; null or absent: the photo's width. */
  maxWidth?: number | null;
  /** Background operations; null or absent: the operation's default (FRAMING_DEFAULTS). */
  framing?: Framing | null;
  /** Background operations: the car's floor shadow; null or absent: on for a backdrop, off for `transparent`. */
  shadow?: boolean | null;
  /** The canvas of a centred car; null or absent: CENTER_ASPECT_DEFAULT (`framing: center` only). */
  aspect?: Aspect | null;
  /**
   * Background operations: a photo `analyze` calls an interior fails (802) instead of being cut out;
   * null or absent: true.
   */
  requireExterior?: boolean | null;
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
  /** Where each plate counted in `plates_detected` lies in the result image, best score first. */
  plates?: PlateFound[];
  /**
   * Background operations: false when the photo looks like a car's front or rear (a plate candidate on
   * the car) and no plate was filled, so a plate may still be readable; true otherwise.
   */
  plate_hidden?: boolean;
  composition?: Composition;
}

/** A plate as the output reports it: the client can audit the fill, or redact in its own style. */
export interface PlateFound {
  /** Top-left, top-right, bottom-right, bottom-left, in the result image's pixels (x right, y down). */
  corners: [[number, number], [number, number], [number, number], [number, number]];
  /** 0-1: the detector's, or the plate text's where the text confirmed it and scores higher. */
  score: number;
}

/** How a background result placed the car, and what the service decided for the user (the output says so). */
/**
 * Another vehicle at least this share of the main one's size (sqrt of the box area) makes the choice a
 * close one: two cars of about equal size, of which the more central was kept.
 */
export const EQUAL_SIZE_SHARE = 0.85;

export interface Composition {
  /** The framing applied: `keep` when asked, or when `center` was asked but the photo's edge cut the car. */
  framing: Framing;
  /** The canvas's shape: the one asked (a cut car keeps its framing on it), or `keep`: the photo's own. */
  aspect: Aspect;
  /** The photo's edges that cut the car; non-empty means it was not re-framed. */
  car_cut_by_edge: Array<'left' | 'right' | 'top' | 'bottom'>;
  /** Distinct vehicles found in the photo, the main car included. */
  vehicles: number;
  /** Another vehicle was about as large and central as the kept one: the more central one was kept. */
  main_car_ambiguous: boolean;
  /** The same decisions in words, for a person reading the job. */
  notes: string[];
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
  /**
   * The attempt whose follow-up (its `job.failed` webhook and event) the sweeper still owes: written with the
   * sweeper's failure, removed once the follow-up is started, so a start that failed is tried at the next sweep.
   */
  followUpDue?: number;
}

/** Whether the sweeper still has something to do for the job: move it on, or hand its end to a follow-up. */
export const sweeperWatches = (job: { status: string; followUpDue?: number }): boolean =>
  job.status === 'queued' || job.status === 'processing' || job.followUpDue !== undefined;
