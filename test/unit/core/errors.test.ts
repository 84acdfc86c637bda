import { describe, expect, it } from 'vitest';
import { errorNames } from '#core/error-names.ts';
import * as errors from '#core/errors.ts';

type ErrorClass = new (message: string) => errors.ServiceError;
const errorClasses = (Object.entries(errors) as [string, unknown][]).filter(
  (entry): entry is [string, ErrorClass] =>
    typeof entry[1] === 'function' && entry[1].prototype instanceof errors.ServiceError,
);

describe('service errors', () => {
  it('every class carries its own name as a literal listed in errorNames', () => {
    expect(errorClasses.length).toBe(Object.keys(errorNames).length);
    for (const [exported, ErrorClass] of errorClasses) {
      const error = new ErrorClass('message');
      expect(error.name).toBe(exported);
      expect(errorNames[exported as keyof typeof errorNames]).toBe(exported);
    }
  });

  it('keeps its name when the class itself is renamed, as a minifier does', () => {
    const Renamed = errors.TransientError;
    Object.defineProperty(Renamed, 'name', { value: 'Wa' });
    try {
      expect(new Renamed('retry me').name).toBe('TransientError');
    } finally {
      Object.defineProperty(Renamed, 'name', { value: 'TransientError' });
    }
  });
});

describe('a job failed by a denied AWS call', () => {
  it.each(['AccessDenied', 'AccessDeniedException', 'PermissionDeniedError'])(
    '%s says the deployment lacks a permission, without the role or the call',
    (name) => {
      const error = errors.jobErrorFromFailure({
        Error: name,
        Cause: JSON.stringify({ errorMessage: 'User: arn:aws:sts::1:assumed-role/x/y is not authorized' }),
      });
      expect(error.code).toBe(500);
      expect(error.message).toMatch(/not allowed an AWS call/);
      expect(error.message).not.toContain('assumed-role');
    },
  );
});

describe('the failure table', () => {
  const lambdaFailure = (name: string, message: string) => ({
    Error: name,
    Cause: JSON.stringify({ errorType: name, errorMessage: message }),
  });

  it('gives every class its status, code and exposure', () => {
    for (const [exported, ErrorClass] of errorClasses) {
      const error = new ErrorClass('message');
      const row = errors.FAILURES[exported as keyof typeof errors.FAILURES];
      expect([error.status, error.code, error.expose]).toEqual([row.status, row.code, row.exposed]);
    }
    expect(new errors.PlateNotFoundError('none')).toMatchObject({ status: 422, code: 803, expose: true });
    expect(new errors.InternalError('x').expose).toBe(false);
  });

  it('reports a failed step by the same table, for jobs and for batches alike', () => {
    expect(errors.jobErrorFromFailure(lambdaFailure('MaskFailedError', 'No car found'))).toEqual({
      code: 802,
      message: 'No car found',
    });
    // An archive entry that cannot be read is the client's 400 in a batch too, not an internal error.
    expect(
      errors.jobErrorFromFailure(
        lambdaFailure('ZipEntryError', 'the entry is encrypted'),
        'The archive could not be unpacked',
      ),
    ).toEqual({ code: 400, message: 'the entry is encrypted' });
    for (const hidden of ['InternalError', 'TransientError', 'TypeError', 'Lambda.Unknown']) {
      expect(
        errors.jobErrorFromFailure(
          lambdaFailure(hidden, 'at /var/task/index.mjs:1'),
          'The archive could not be unpacked',
        ),
      ).toEqual({
        code: 500,
        message: 'The archive could not be unpacked',
      });
    }
  });
  it('tells a job that never got a processing slot (throttled past its waits) from a broken one', () => {
    const busy = errors.jobErrorFromFailure(
      lambdaFailure('Lambda.TooManyRequestsException', 'Rate Exceeded. (Service: Lambda, Status Code: 429)'),
    );
    expect(busy.code).toBe(503);
    expect(busy.message).toMatch(/too busy.*nothing was charged.*retry/i);
    expect(busy.message).not.toContain('Status Code');
  });
});
