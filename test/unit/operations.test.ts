import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { OPERATIONS } from '#core/jobs/job.ts';

/**
 * The places that list the operations outside the type system, so that an operation added to the domain's
 * list (CONTRIBUTING.md, Add an operation) is not forgotten there. The typecheck covers the maps keyed by
 * `Operation`; these are the ones it cannot see.
 */
const REPO = path.resolve(import.meta.dirname, '..', '..');
const read = (file: string) => readFileSync(path.join(REPO, file), 'utf8');

describe('every operation of layers/core/jobs/job.ts', () => {
  it('can be picked in the web console', () => {
    const page = read('web/console/index.html');
    const select = page.slice(page.indexOf('<select id="mode"'), page.indexOf('</select>'));
    const offered = [...select.matchAll(/<option value="([a-z_]+)"/g)].map((match) => match[1]);
    expect(offered.length).toBeGreaterThan(0);
    expect(offered.sort()).toEqual([...OPERATIONS].sort());
  });
});
