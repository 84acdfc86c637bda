import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { CfnTemplate } from '../../lib/app.ts';
import { repoRoot } from '../../lib/config.ts';
import { readAssemblyTemplates } from '../../local/template.ts';

/**
 * The app synthesized once per change of its sources, for every test that reads it. Kept in `.cache/`
 * under a hash of what the synth reads: the tracked and new files of the sources, the lockfile and
 * cdk.json. A change to any of them makes a new one.
 * - The plain assembly (no bundling, about 2 s): the servers the integration tests start run from it
 *   (LOCAL_ASSEMBLY_DIR), and the infra tests and cfn-lint read its templates.
 * - The bundled one, as `cdk deploy` builds it (esbuild over every zip function, the image context staged;
 *   about a minute of CPU): bundles.test.ts and the package tests.
 */
const READS = [
  'lib',
  'functions',
  'layers',
  'models',
  'web',
  // get-openapi's bundle carries it (functions/api/get-openapi/handler.ts).
  'docs/openapi.json',
  'package.json',
  'npm-shrinkwrap.json',
  'cdk.json',
];

let hashOfInputs: string | undefined;
function inputsHash(): string {
  if (hashOfInputs) return hashOfInputs;
  const files = execFileSync(
    'git',
    ['ls-files', '--cached', '--others', '--exclude-standard', '--', ...READS],
    {
      cwd: repoRoot,
      encoding: 'utf8',
    },
  )
    .split('\n')
    .filter((file) => file && existsSync(path.join(repoRoot, file)))
    .sort();
  const hash = createHash('sha256');
  for (const file of files)
    hash
      .update(file)
      .update('\0')
      .update(readFileSync(path.join(repoRoot, file)));
  hashOfInputs = hash.digest('hex').slice(0, 16);
  return hashOfInputs;
}

const STALE_LOCK_MS = 10 * 60_000;

export interface Assembly {
  /** The cloud assembly folder: templates, asset manifests and `asset.<hash>` folders. */
  dir: string;
  templates: { data: CfnTemplate; service: CfnTemplate };
}

/** The shared bundled assembly (see above). */
export const bundledAssembly = (): Promise<Assembly> => cachedAssembly('assembly-bundled', true);

/** The shared plain assembly (see above). */
export const plainAssembly = (): Promise<Assembly> => cachedAssembly('assembly', false);

/**
 * Synthesized by the first caller; test files in other workers wait for it (a lock folder) rather than
 * synthesize the same sources at the same time.
 */
async function cachedAssembly(prefix: string, bundle: boolean): Promise<Assembly> {
  const cache = path.join(repoRoot, '.cache');
  const dir = path.join(cache, `${prefix}-${inputsHash()}`);
  const lock = `${dir}.lock`;
  await mkdir(cache, { recursive: true });
  while (!existsSync(dir)) {
    try {
      await mkdir(lock);
    } catch {
      // A lock older than any synth was left by a process that died: take it over.
      const age = Date.now() - (await stat(lock).catch(() => ({ mtimeMs: Date.now() }))).mtimeMs;
      if (age > STALE_LOCK_MS) await rm(lock, { recursive: true, force: true });
      await sleep(500);
      continue;
    }
    try {
      if (!existsSync(dir)) {
        const building = `${dir}.building`;
        await rm(building, { recursive: true, force: true });
        const { synthesizeTemplates } = await import('../../lib/app.ts');
        synthesizeTemplates({ bundle, outdir: building });
        await rename(building, dir);
        // Older assemblies (a bundled one is about 90 MB) are of sources that are gone.
        const older = new RegExp(`^${prefix}-[0-9a-f]{16}$`);
        for (const entry of await readdir(cache))
          if (older.test(entry) && path.join(cache, entry) !== dir)
            await rm(path.join(cache, entry), { recursive: true, force: true });
      }
    } finally {
      await rm(lock, { recursive: true, force: true });
    }
  }
  return { dir, templates: await readAssemblyTemplates(dir) };
}
