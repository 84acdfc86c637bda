import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../../lib/config.ts';

const readJson = (file: string) => JSON.parse(readFileSync(file, 'utf8'));
const INSTALL_SCRIPTS = ['preinstall', 'install', 'postinstall'];

/** Every installed package's name and manifest, scoped ones and nested copies included. */
function* installedPackages(dir: string): Generator<{ name: string; manifest: Record<string, unknown> }> {
  if (!existsSync(dir)) return;
  for (const entry of readdirSync(dir)) {
    if (entry.startsWith('.')) continue;
    const dirs = entry.startsWith('@')
      ? readdirSync(path.join(dir, entry)).map((name) => path.join(dir, entry, name))
      : [path.join(dir, entry)];
    for (const packageDir of dirs) {
      const manifestFile = path.join(packageDir, 'package.json');
      if (!existsSync(manifestFile)) continue;
      const manifest = readJson(manifestFile);
      yield { name: manifest.name, manifest };
      yield* installedPackages(path.join(packageDir, 'node_modules'));
    }
  }
}

describe('npm install on a fresh clone', () => {
  it('decides every dependency install script in package.json "allowScripts", so npm lists none as unreviewed', () => {
    const allowScripts: Record<string, boolean> = readJson(path.join(repoRoot, 'package.json')).allowScripts;
    const withScripts = new Set<string>();
    for (const { name, manifest } of installedPackages(path.join(repoRoot, 'node_modules'))) {
      const scripts = (manifest.scripts ?? {}) as Record<string, string>;
      if (INSTALL_SCRIPTS.some((script) => scripts[script])) withScripts.add(name);
    }
    expect(withScripts.size).toBeGreaterThan(0);
    for (const name of withScripts) expect(allowScripts, name).toHaveProperty([name]);
    // onnxruntime-node's postinstall downloads CUDA libraries from outside the npm registry.
    expect(allowScripts['onnxruntime-node']).toBe(false);
  });

  it('sets only settings npm knows in .npmrc (npm warns "Unknown project config" for any other)', () => {
    const run = spawnSync('npm', ['config', 'get', 'engine-strict'], { cwd: repoRoot, encoding: 'utf8' });
    expect(run.status).toBe(0);
    expect(run.stderr).not.toMatch(/Unknown (project )?config/);
  });
});
