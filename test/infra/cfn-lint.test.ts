import { execFile, spawnSync } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { synthesizeTemplates } from '../../lib/app.ts';
import { repoRoot } from '../../lib/config.ts';

/** .ci/run installs cfn-lint; here it runs where it is installed (Python), and skips elsewhere. */
const hasCfnLint = spawnSync('cfn-lint', ['--version'], { stdio: 'ignore' }).status === 0;

describe.skipIf(!hasCfnLint)('cfn-lint', () => {
  it('finds nothing in the synthesized templates beyond the exceptions of .cfnlintrc', async () => {
    const outdir = await mkdtemp(path.join(tmpdir(), 'photo-jobs-cfn-lint-'));
    try {
      synthesizeTemplates({ outdir });
      const templates = (await readdir(outdir)).filter((file) => file.endsWith('.template.json'));
      expect(templates.length).toBe(2);
      // From the repository root, so that .cfnlintrc and its registry schemas apply.
      const result = await promisify(execFile)(
        'cfn-lint',
        templates.map((file) => path.join(outdir, file)),
        { cwd: repoRoot },
      ).catch((error: { stdout?: string; stderr?: string; code?: number }) => error);
      expect(`${result.stdout ?? ''}${result.stderr ?? ''}`).toBe('');
    } finally {
      await rm(outdir, { recursive: true, force: true });
    }
  });
});
