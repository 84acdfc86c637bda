import { awsDenialNames, type ErrorName, errorNames, LAMBDA_THROTTLED } from './error-names.ts';

interface Failure {
  /** The HTTP status of an API answer. */
  readonly status: number;
  /** The spec's code (section 7), in the error body and in a failed job's or batch's `error`. */
  readonly code: number;
  /**
   * Its message is written for the client: shown in the API answer and in a job's or batch's `error`.
   * Otherwise the client reads a generic sentence and the message goes to the logs.
   */
  readonly exposed: boolean;
}

const failure = (status: number, code = status, exposed = true): Failure => ({ status, code, exposed });

/**
 * Every failure the service reports, by name: the one table that the error classes, the job workflow's
 * failures (`jobErrorFromFailure`) and the batch archive's failures read.
 */
export const FAILURES = {
  BadRequestError: failure(400),
  SourceImageError: failure(400),
  ZipEntryError: failure(400),
  UnauthorizedError: failure(401),
  InsufficientCreditsError: failure(402),
  NotFoundError: failure(404),
  MethodNotAllowedError: failure(405),
  ConflictError: failure(409),
  JobCancelledError: failure(409),
  GoneError: failure(410),
  PayloadTooLargeError: failure(413),
  UnsupportedMediaTypeError: failure(415),
  UnclassifiableError: failure(422, 800),
  MaskFailedError: failure(422, 802),
  PlateNotFoundError: failure(422, 803),
  TooManyRequestsError: failure(429),
  ModelUnavailableError: failure(500),
  PermissionDeniedError: failure(500),
  DownloadFailedError: failure(500),
  InternalError: failure(500, 500, false),
  WebhookDeliveryError: failure(502),
  TransientError: failure(503, 503, false),
} as const satisfies Record<ErrorName, Failure>;

/**
 * Every failure a client or the workflow can observe is one of these classes.
 * `name` is part of the contract: Step Functions Retry/Catch match on it, and settlement maps it to
 * the job's `error.code`. Each class writes its name out (error-names.ts), as Powertools does, because
 * minifiers rename classes. Status, code and exposure come from `FAILURES` by that name.
 */
export abstract class ServiceError extends Error {
  abstract override readonly name: ErrorName;
  get status(): number {
    return FAILURES[this.name].status;
  }
  get code(): number {
    return FAILURES[this.name].code;
  }
  /** Safe to show to the API caller; internal details stay in `cause`. */
  get expose(): boolean {
    return FAILURES[this.name].exposed;
  }
}

export class BadRequestError extends ServiceError {
  override readonly name: ErrorName = errorNames.BadRequestError;
}

/** The source could not be fetched from `url`, or it is not a decodable image. */
export class SourceImageError extends ServiceError {
  override readonly name: ErrorName = errorNames.SourceImageError;
}

export class UnauthorizedError extends ServiceError {
  override readonly name: ErrorName = errorNames.UnauthorizedError;
}

export class InsufficientCreditsError extends ServiceError {
  override readonly name: ErrorName = errorNames.InsufficientCreditsError;
}

export class NotFoundError extends ServiceError {
  override readonly name: ErrorName = errorNames.NotFoundError;
}

/** A known path asked with a method it does not take; `allow` is sent as the `Allow` header (RFC 9110, 15.5.6). */
export class MethodNotAllowedError extends ServiceError {
  override readonly name: ErrorName = errorNames.MethodNotAllowedError;
  readonly allow: readonly string[];

  constructor(message: string, allow: readonly string[] = [], options?: { cause?: unknown }) {
    super(message, options);
    this.allow = allow;
  }
}

export class ConflictError extends ServiceError {
  override readonly name: ErrorName = errorNames.ConflictError;
}

export class GoneError extends ServiceError {
  override readonly name: ErrorName = errorNames.GoneError;
}

export class PayloadTooLargeError extends ServiceError {
  override readonly name: ErrorName = errorNames.PayloadTooLargeError;
}

export class UnsupportedMediaTypeError extends ServiceError {
  override readonly name: ErrorName = errorNames.UnsupportedMediaTypeError;
}

/** 800: the model could not classify the photo. */
export class UnclassifiableError extends ServiceError {
  override readonly name: ErrorName = errorNames.UnclassifiableError;
}

/** 802: the background mask could not be created. */
export class MaskFailedError extends ServiceError {
  override readonly name: ErrorName = errorNames.MaskFailedError;
}

/** 803: no license plate was detected. */
export class PlateNotFoundError extends ServiceError {
  override readonly name: ErrorName = errorNames.PlateNotFoundError;
}

export class TooManyRequestsError extends ServiceError {
  override readonly name: ErrorName = errorNames.TooManyRequestsError;
  /** Sent as `Retry-After`: when trying again has a chance. */
  readonly retryAfterSeconds: number;

  constructor(message: string, options?: { cause?: unknown; retryAfterSeconds?: number }) {
    super(message, options);
    this.retryAfterSeconds = Math.max(1, Math.ceil(options?.retryAfterSeconds ?? 1));
  }
}

/** A model file is absent or fails its checksum: an operator problem, never papered over with a fake result. */
export class ModelUnavailableError extends ServiceError {
  override readonly name: ErrorName = errorNames.ModelUnavailableError;
}

/** An AWS call was denied: the deployment lacks a grant. Its operator's logs name the call and the role. */
export class PermissionDeniedError extends ServiceError {
  override readonly name: ErrorName = errorNames.PermissionDeniedError;
}

export const isAwsDenial = (error: unknown): boolean =>
  error instanceof Error &&
  (awsDenialNames.has(error.name) || error.name === errorNames.PermissionDeniedError);

export class InternalError extends ServiceError {
  override readonly name: ErrorName = errorNames.InternalError;
}

/** Storage or a downstream service hiccuped; the workflow retries these. */
export class TransientError extends ServiceError {
  override readonly name: ErrorName = errorNames.TransientError;
}

/** The workflow stopped a job because its owner cancelled it. */
export class JobCancelledError extends ServiceError {
  override readonly name: ErrorName = errorNames.JobCancelledError;
}

/** A webhook attempt got no 2xx answer; the workflow retries these on the delivery schedule. */
export class WebhookDeliveryError extends ServiceError {
  override readonly name: ErrorName = errorNames.WebhookDeliveryError;
}

/** Busy is not broken: the job never ran, and a retry later runs it. */
const BUSY_MESSAGE =
  'The service was too busy to run this job within its run (every processing slot was in use); nothing was ' +
  'charged. Retry it later (POST /jobs/{id}/retry)';

const DENIED_MESSAGE =
  "Processing failed: the service is not allowed an AWS call it needs (a deployment fault; its operator's logs name it)";

/**
 * Turn a Step Functions failure (`{Error, Cause}`, Cause being Lambda's JSON error) into the `error` of the
 * job (or, with its own `fallback`, the batch) it failed. Only our own exposed errors keep their code and
 * message; anything else is reported generically, so stack details never reach a client.
 */
export function jobErrorFromFailure(
  failed: { Error?: string; Cause?: string } | undefined,
  fallback = 'Processing failed because of an internal error',
): { code: number; message: string } {
  const name = failed?.Error ?? 'Unknown';
  if (name === 'States.Timeout') return { code: 500, message: 'Processing took too long and was stopped' };
  if (name === LAMBDA_THROTTLED) return { code: 503, message: BUSY_MESSAGE };
  if (awsDenialNames.has(name) || name === errorNames.PermissionDeniedError)
    return { code: 500, message: DENIED_MESSAGE };
  const known = Object.hasOwn(FAILURES, name) ? FAILURES[name as ErrorName] : null;
  if (!known?.exposed) return { code: 500, message: fallback };
  let message: string = name;
  try {
    const cause = JSON.parse(failed?.Cause ?? '{}') as { errorMessage?: unknown };
    if (typeof cause.errorMessage === 'string') message = cause.errorMessage;
  } catch {
    if (failed?.Cause) message = failed.Cause;
  }
  return { code: known.code, message };
}

/** An archive entry that cannot be read (unsupported method, encrypted, corrupt); the archive as a whole is fine. */
export class ZipEntryError extends BadRequestError {
  override readonly name: ErrorName = errorNames.ZipEntryError;
}

/** The archive workflow could not build a batch's download (its execution failed). */
export class DownloadFailedError extends ServiceError {
  override readonly name: ErrorName = errorNames.DownloadFailedError;
}
