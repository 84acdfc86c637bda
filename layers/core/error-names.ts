/**
 * The name of every error the service throws. Step Functions Retry/Catch (lib/) and settlement match on
 * these strings, so they are written out here, once, and never derived from a class name: bundlers rename
 * classes. `lib/` imports this module (and only this one) from the run-time code.
 */
export const errorNames = {
  BadRequestError: 'BadRequestError',
  SourceImageError: 'SourceImageError',
  UnauthorizedError: 'UnauthorizedError',
  InsufficientCreditsError: 'InsufficientCreditsError',
  NotFoundError: 'NotFoundError',
  MethodNotAllowedError: 'MethodNotAllowedError',
  ConflictError: 'ConflictError',
  GoneError: 'GoneError',
  PayloadTooLargeError: 'PayloadTooLargeError',
  UnsupportedMediaTypeError: 'UnsupportedMediaTypeError',
  UnclassifiableError: 'UnclassifiableError',
  MaskFailedError: 'MaskFailedError',
  PlateNotFoundError: 'PlateNotFoundError',
  TooManyRequestsError: 'TooManyRequestsError',
  ModelUnavailableError: 'ModelUnavailableError',
  InternalError: 'InternalError',
  TransientError: 'TransientError',
  JobCancelledError: 'JobCancelledError',
  WebhookDeliveryError: 'WebhookDeliveryError',
  ZipEntryError: 'ZipEntryError',
  DownloadFailedError: 'DownloadFailedError',
  PermissionDeniedError: 'PermissionDeniedError',
} as const;

/**
 * The names AWS gives a call its caller's role may not make: S3's `AccessDenied`, the JSON services'
 * `AccessDeniedException`. A denial is a deployment's missing grant, never transient: no retry helps.
 */
export const awsDenialNames: ReadonlySet<string> = new Set(['AccessDenied', 'AccessDeniedException']);

/**
 * What Step Functions names a Lambda invocation refused for want of concurrency (the inference function's
 * reserved concurrency all in use). The job's run waits it out for a while (lib/config.ts), then fails with it.
 */
export const LAMBDA_THROTTLED = 'Lambda.TooManyRequestsException';

export type ErrorName = (typeof errorNames)[keyof typeof errorNames];
