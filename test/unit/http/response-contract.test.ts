import { describe, expect, it } from 'vitest';
import { expectDocumented } from '../../integration/support/contract.ts';

describe('expectDocumented (the integration tests check every answer against the OpenAPI document)', () => {
  it('accepts an error body of a listed status', () => {
    expect(() =>
      expectDocumented('GET', '/jobs/job_0123456789abcdefghjkmnpq', 404, {
        code: 404,
        message: 'No such job',
        result: false,
      }),
    ).not.toThrow();
  });

  it('refuses a body missing a documented field', () => {
    expect(() => expectDocumented('GET', '/quota', 200, { result: true, quota: {} })).toThrow(/active/);
  });

  it('refuses a status the route does not document', () => {
    expect(() => expectDocumented('GET', '/quota', 418, {})).toThrow(/does not list/);
  });

  it('refuses a route the document does not have', () => {
    expect(() => expectDocumented('GET', '/nowhere', 200, {})).toThrow(/not in the OpenAPI document/);
  });
});
