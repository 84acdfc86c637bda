import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { CfnTemplate } from '../../lib/app.ts';
import { repoRoot, stackNames } from '../../lib/config.ts';

/**
 * The app synthesized with bundling on, as `cdk deploy` builds it: esbuild over every zip function, the
 * image context staged. It costs about a minute of CPU, so the tests that read it (bundles.test.ts, the
 * package tests) share one, kept in `.cache/` under a hash of what the synth reads: the tracked and new
 * files of the sources, the lockfile and cdk.json. A change to any of them makes a new one.
 */
const READS = [
  'lib',
  'functions',
  'layers',
  'models',
  'web',
  'package.json',
  'npm-shrinkwrap.json',
  'cdk.json',
];

function inputsHash(): string {
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
  return hash.digest('hex').slice(0, 16);
}

const STALE_LOCK_MS = 10 * 60_000;

export interface BundledAssembly {
  /** The cloud assembly folder: templates, asset manifests and `asset.<hash>` folders. */
  dir: string;
  templates: { data: CfnTemplate; service: CfnTemplate };
}

/**
 * The shared bundled assembly, synthesized by the first caller; test files in other workers wait for it
 * (a lock folder) rather than run esbuild over the same sources at the same time.
 */
export async function bundledAssembly(): Promise<BundledAssembly> {
  const cache = path.join(repoRoot, '.cache');
  const dir = path.join(cache, `assembly-bundled-${inputsHash()}`);
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
        synthesizeTemplates({ bundle: true, outdir: building });
        await rename(building, dir);
        // Older assemblies (about 90 MB each) are of sources that are gone.
        for (const entry of await readdir(cache))
          if (/^assembly-bundled-[0-9a-f]{16}$/.test(entry) && path.join(cache, entry) !== dir)
            await rm(path.join(cache, entry), { recursive: true, force: true });
      }
    } finally {
      await rm(lock, { recursive: true, force: true });
    }
  }
  const template = async (stack: string) =>
    JSON.parse(await readFile(path.join(dir, `${stack}.template.json`), 'utf8')) as CfnTemplate;
  return {
    dir,
    templates: { data: await template(stackNames.data), service: await template(stackNames.service) },
  };
}
