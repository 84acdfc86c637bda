/**
 * Re-chunks a zip function's esbuild output so that its cold start reads one file: `index.mjs` holds every
 * module the handler imports statically, and `chunks/` only what an `import()` reaches, each chunk
 * importing what it shares with init from `index.mjs`. esbuild splits by the set of entries (the handler
 * and every `import()`) that reach a module, so the code an API handler loads at init came in 15-18 files,
 * and Node's ES module loader spends ~1 ms of CPU on each file and its bindings
 * (docs/decisions/0078-one-file-at-init.md). Rollup's `manualChunks` states the grouping we want; it
 * re-chunks esbuild's output as it is (no transform, no tree-shaking: esbuild did both).
 *
 * Run as a script (`node --import tsx one-file-at-init.ts <dir>`) because CDK's local bundling is
 * synchronous and Rollup is not: ./handler-function.ts runs it after esbuild.
 */
import { existsSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import { rollup } from 'rollup';

const isNodeBuiltin = (id: string) => id.startsWith('node:') || builtinModules.includes(id);

async function oneFileAtInit(bundleDir: string): Promise<void> {
  const entry = path.resolve(bundleDir, 'index.mjs');
  const build = await rollup({
    input: entry,
    external: isNodeBuiltin,
    treeshake: false,
    // The handler's chunk may export what the lazy chunks import from it.
    preserveEntrySignatures: 'allow-extension',
    onwarn: (warning) => {
      // esbuild leaves a binding of a Node module imported in a chunk that no longer uses it: harmless.
      if (warning.code === 'UNUSED_EXTERNAL_IMPORT') return;
      throw new Error(`re-chunking ${bundleDir}: ${warning.code} ${warning.message}`);
    },
  });
  let atInit: Set<string> | undefined;
  const staging = mkdtempSync(path.join(bundleDir, '.rechunk-'));
  try {
    await build.write({
      dir: staging,
      format: 'es',
      entryFileNames: 'index.mjs',
      chunkFileNames: 'chunks/[name]-[hash].mjs',
      manualChunks(id, { getModuleInfo }) {
        if (!atInit) {
          atInit = new Set();
          const pending = [entry];
          for (let next = pending.pop(); next; next = pending.pop()) {
            if (atInit.has(next)) continue;
            atInit.add(next);
            pending.push(...(getModuleInfo(next)?.importedIds ?? []).filter((dep) => !isNodeBuiltin(dep)));
          }
        }
        return atInit.has(id) ? 'index' : undefined;
      },
    });
    await build.close();
    rmSync(entry);
    rmSync(path.join(bundleDir, 'chunks'), { recursive: true, force: true });
    renameSync(path.join(staging, 'index.mjs'), entry);
    if (existsSync(path.join(staging, 'chunks')))
      renameSync(path.join(staging, 'chunks'), path.join(bundleDir, 'chunks'));
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

// Only ever run as a script (nothing imports it): its argument is the bundle's folder.
const [bundleDir] = process.argv.slice(2);
if (!bundleDir) throw new Error('usage: one-file-at-init.ts <bundle folder>');
await oneFileAtInit(bundleDir);
