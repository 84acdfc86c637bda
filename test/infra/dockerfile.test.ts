import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { inference, repoRoot } from '../../lib/config.ts';

const dockerfile = readFileSync(path.join(repoRoot, inference.dockerfile), 'utf8');
/** Logical instructions: continuation lines joined, comments dropped. */
const instructions = dockerfile
  .replace(/\\\n/g, ' ')
  .split('\n')
  .map((line) => line.trim())
  .filter((line) => line && !line.startsWith('#'));
const tracked = execFileSync('git', ['ls-files'], { cwd: repoRoot, encoding: 'utf8' })
  .split('\n')
  .filter(Boolean);

describe('the inference image', () => {
  const copies = instructions
    .filter((line) => /^COPY\s/i.test(line) && !/--from=/i.test(line))
    .map((line) => line.split(/\s+/).slice(1, -1));

  it('copies from the build context only files tracked in git (or an earlier stage)', () => {
    expect(copies.length).toBeGreaterThan(0);
    for (const sources of copies) {
      for (const source of sources) {
        expect(source, 'a COPY source may not be a build argument').not.toMatch(/\$/);
        const clean = source.replace(/\/$/, '');
        const isTracked = tracked.some((file) => file === clean || file.startsWith(`${clean}/`));
        expect(isTracked, `${source} is not tracked in git`).toBe(true);
      }
    }
  });

  it('gets its models by the same fetch a fresh clone runs, with a mirror as a build argument', () => {
    expect(instructions).toContain('ARG MODELS_BASE_URL=');
    const fetchStep = instructions.find((line) => line.includes('bin/models.ts fetch'));
    expect(fetchStep).toMatch(/MODELS_BASE_URL="\$\{MODELS_BASE_URL\}"/);
    expect(fetchStep).toMatch(/bin\/models\.ts verify/);
  });

  it('sends the files the Dockerfile copies in the build context (the allow-list covers them)', () => {
    const allowed = inference.contextExcludes
      .filter((rule) => rule.startsWith('!'))
      .map((rule) => rule.slice(1));
    for (const sources of copies) {
      for (const source of sources) {
        const clean = source.replace(/\/$/, '');
        expect(
          allowed.some((rule) => clean === rule || clean.startsWith(`${rule}/`)),
          `${source} is outside the build context`,
        ).toBe(true);
      }
    }
  });
});
