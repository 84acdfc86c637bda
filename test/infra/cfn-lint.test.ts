import { execFile, spawnSync } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../../lib/config.ts';
import { plainAssembly } from '../support/assembly.ts';

/** .ci/run installs cfn-lint; here it runs where it is installed (Python), and skips elsewhere. */
const hasCfnLint = spawnSync('cfn-lint', ['--version'], { stdio: 'ignore' }).status === 0;

describe.skipIf(!hasCfnLint)('cfn-lint', () => {
  it('finds nothing in the synthesized templates beyond the exceptions of .cfnlintrc', async () => {
    // The run's one synth (test/support/assembly.ts): CI lints it once, here.
    const { dir } = await plainAssembly();
    const templates = (await readdir(dir)).filter((file) => file.endsWith('.template.json'));
    expect(templates.length).toBe(2);
    // From the repository root, so that .cfnlintrc and its registry schemas apply.
    const result = await promisify(execFile)(
      'cfn-lint',
      templates.map((file) => path.join(dir, file)),
      { cwd: repoRoot },
    ).catch((error: { stdout?: string; stderr?: string; code?: number }) => error);
    expect(`${result.stdout ?? ''}${result.stderr ?? ''}`).toBe('');
  });
});
