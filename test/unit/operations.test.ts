import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { costOf, credits, OPERATION_NAMES, PRICES } from '#core/jobs/operations.ts';

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
    expect(offered.sort()).toEqual([...OPERATION_NAMES].sort());
  });
});

/**
 * The prose that states a price, rendered from the registry: a price changed in layers/core/jobs/operations.ts
 * fails here until the sentences say the new one.
 */
describe('price sentences in the docs', () => {
  const { edit, analysis } = PRICES;
  const sentences: Array<[string, string]> = [
    ['README.md', `Edits cost ${credits(edit)} and analyses ${analysis}, reserved when the job`],
    [
      'docs/decisions/0005-error-statuses.md',
      `the account cannot cover the reservation (${edit} per edit, ${analysis} per analysis)`,
    ],
    [
      'docs/decisions/0032-batches-are-jobs-driven-by-settlement.md',
      `inserted with its ${edit}-credit reservation`,
    ],
    [
      'docs/decisions/0032-batches-are-jobs-driven-by-settlement.md',
      `\`cost_credits\` is what was charged (${edit} × succeeded)`,
    ],
  ];

  it.each(sentences)('%s says: %s', (file, sentence) => {
    expect(read(file).replace(/\s+/g, ' ')).toContain(sentence);
  });

  it('costs follow the registry: one price per kind of work', () => {
    for (const name of OPERATION_NAMES) {
      expect(costOf(name)).toBe(name === 'analyze' ? analysis : edit);
    }
  });
});
