import { awsDenialNames, errorNames } from './error-names.ts';

export { type ErrorName, errorNames } from './error-names.ts';

/**
 * Every failure a client or the workflow can observe is one of these classes.
 * `name` is part of the contract: Step Functions Retry/Catch match on it, and settlement maps it to
 * the job's `error.code`. Each class writes its name out (error-names.ts), as Powertools does, because
 * minifiers rename classes. `code` is the spec's numeric code (section 7) carried in the error body.
 */
export abstract class ServiceError extends Error {
  abstract override readonly name: string;
  abstract readonly status: number;
  abstract readonly code: number;
  /** Safe to show to the API caller; internal details stay in `cause`. */
  readonly expose: boolean = true;
}

export class BadRequestError extends ServiceError {
  override readonly name: string = errorNames.BadRequestError;
  readonly status = 400;
  readonly code = 400;
}

/** The source could not be fetched from `url`, or it is not a decodable image. */
export class SourceImageError extends ServiceError {
  override readonly name: string = errorNames.SourceImageError;
  readonly status = 400;
  readonly code = 400;
}

export class UnauthorizedError extends ServiceError {
  override readonly name: string = errorNames.UnauthorizedError;
  readonly status = 401;
  readonly code = 401;
}

export class ForbiddenError extends ServiceError {
  override readonly name: string = errorNames.ForbiddenError;
  readonly status = 403;
  readonly code = 403;
}

export class InsufficientCreditsError extends ServiceError {
  override readonly name: string = errorNames.InsufficientCreditsError;
  readonly status = 402;
  readonly code = 402;
}

export class NotFoundError extends ServiceError {
  override readonly name: string = errorNames.NotFoundError;
  readonly status = 404;
  readonly code = 404;
}

/** A known path asked with a method it does not take; `allow` is sent as the `Allow` header (RFC 9110, 15.5.6). */
export class MethodNotAllowedError extends ServiceError {
  override readonly name: string = errorNames.MethodNotAllowedError;
  readonly status = 405;
  readonly code = 405;
  readonly allow: readonly string[];

  constructor(message: string, allow: readonly string[] = [], options?: { cause?: unknown }) {
    super(message, options);
    this.allow = allow;
  }
}

export class ConflictError extends ServiceError {
  override readonly name: string = errorNames.ConflictError;
  readonly status = 409;
  readonly code = 409;
}

export class GoneError extends ServiceError {
  override readonly name: string = errorNames.GoneError;
  readonly status = 410;
  readonly code = 410;
}

export class PayloadTooLargeError extends ServiceError {
  override readonly name: string = errorNames.PayloadTooLargeError;
  readonly status = 413;
  readonly code = 413;
}

export class UnsupportedMediaTypeError extends ServiceError {
  override readonly name: string = errorNames.UnsupportedMediaTypeError;
  readonly status = 415;
  readonly code = 415;
}

/** 800: the model could not classify the photo. */
export class UnclassifiableError extends ServiceError {
  override readonly name: string = errorNames.UnclassifiableError;
  readonly status = 422;
  readonly code = 800;
}

/** 802: the background mask could not be created. */
export class MaskFailedError extends ServiceError {
  override readonly name: string = errorNames.MaskFailedError;
  readonly status = 422;
  readonly code = 802;
}

/** 803: no license plate was detected. */
export class PlateNotFoundError extends ServiceError {
  override readonly name: string = errorNames.PlateNotFoundError;
  readonly status = 422;
  readonly code = 803;
}

export class TooManyRequestsError extends ServiceError {
  override readonly name: string = errorNames.TooManyRequestsError;
  readonly status = 429;
  readonly code = 429;
  /** Sent as `Retry-After`: when trying again has a chance. */
  readonly retryAfterSeconds: number;

  constructor(message: string, options?: { cause?: unknown; retryAfterSeconds?: number }) {
    super(message, options);
    this.retryAfterSeconds = Math.max(1, Math.ceil(options?.retryAfterSeconds ?? 1));
  }
}

/** A model file is absent or fails its checksum: an operator problem, never papered over with a fake result. */
export class ModelUnavailableError extends ServiceError {
  override readonly name: string = errorNames.ModelUnavailableError;
  readonly status = 500;
  readonly code = 500;
}

/** An AWS call was denied: the deployment lacks a grant. Its operator's logs name the call and the role. */
export class PermissionDeniedError extends ServiceError {
  override readonly name: string = errorNames.PermissionDeniedError;
  readonly status = 500;
  readonly code = 500;
}

export const isAwsDenial = (error: unknown): boolean =>
  error instanceof Error &&
  (awsDenialNames.has(error.name) || error.name === errorNames.PermissionDeniedError);

export class InternalError extends ServiceError {
  override readonly name: string = errorNames.InternalError;
  readonly status = 500;
  readonly code = 500;
  override readonly expose = false;
}

/** Storage or a downstream service hiccuped; the workflow retries these. */
export class TransientError extends ServiceError {
  override readonly name: string = errorNames.TransientError;
  readonly status = 503;
  readonly code = 503;
  override readonly expose = false;
}

/** The workflow stopped a job because its owner cancelled it. */
export class JobCancelledError extends ServiceError {
  override readonly name: string = errorNames.JobCancelledError;
  readonly status = 409;
  readonly code = 409;
}

/** A webhook attempt got no 2xx answer; the workflow retries these on the delivery schedule. */
export class WebhookDeliveryError extends ServiceError {
  override readonly name: string = errorNames.WebhookDeliveryError;
  readonly status = 502;
  readonly code = 502;
}

const DENIED_MESSAGE =
  "Processing failed: the service is not allowed an AWS call it needs (a deployment fault; its operator's logs name it)";

const EXPOSED_WORKFLOW_ERRORS: Record<string, number> = {
  [errorNames.PlateNotFoundError]: 803,
  [errorNames.MaskFailedError]: 802,
  [errorNames.UnclassifiableError]: 800,
  [errorNames.SourceImageError]: 400,
  [errorNames.UnsupportedMediaTypeError]: 415,
  [errorNames.ModelUnavailableError]: 500,
};

/**
 * Turn a Step Functions failure (`{Error, Cause}`, Cause being Lambda's JSON error) into the job's
 * `error`. Only our own named errors keep their message; anything else is reported generically so
 * stack details never reach a client.
 */
export function jobErrorFromFailure(failure: { Error?: string; Cause?: string } | undefined): {
  code: number;
  message: string;
} {
  const name = failure?.Error ?? 'Unknown';
  const code = EXPOSED_WORKFLOW_ERRORS[name];
  if (code === undefined) {
    if (name === 'States.Timeout') return { code: 500, message: 'Processing took too long and was stopped' };
    if (awsDenialNames.has(name) || name === errorNames.PermissionDeniedError)
      return { code: 500, message: DENIED_MESSAGE };
    return { code: 500, message: 'Processing failed because of an internal error' };
  }
  let message = name;
  try {
    const cause = JSON.parse(failure?.Cause ?? '{}') as { errorMessage?: unknown };
    if (typeof cause.errorMessage === 'string') message = cause.errorMessage;
  } catch {
    if (failure?.Cause) message = failure.Cause;
  }
  return { code, message };
}

/** An archive entry that cannot be read (unsupported method, encrypted, corrupt); the archive as a whole is fine. */
export class ZipEntryError extends BadRequestError {
  override readonly name: string = errorNames.ZipEntryError;
}

/** The archive workflow could not build a batch's download (its execution failed). */
export class DownloadFailedError extends ServiceError {
  override readonly name: string = errorNames.DownloadFailedError;
  readonly status = 500;
  readonly code = 500;
}
