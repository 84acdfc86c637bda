/**
 * The inference image's bundle: `node --import tsx functions/inference/bundle.ts <outfile>`. The Dockerfile
 * runs it, and the local server (PHOTO_JOBS_BUNDLED) and the infra tests build the same bundle with it.
 */
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { type BuildOptions, build } from 'esbuild';

/** Native code, installed for the image's platform by `npm ci --omit=dev` next to the bundle. */
export const inferenceExternals = ['onnxruntime-node', 'sharp'] as const;

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

const inferenceBundleOptions = (outfile: string): BuildOptions => ({
  entryPoints: [resolve(repoRoot, 'functions/inference/handler.ts')],
  outfile,
  bundle: true,
  platform: 'node',
  target: 'node22',
  format: 'esm',
  mainFields: ['module', 'main'],
  minify: true,
  // Error and class names are part of the contract with the state machine (layers/core/error-names.ts).
  keepNames: true,
  sourcemap: true,
  sourcesContent: false,
  external: [...inferenceExternals],
  // Some CommonJS dependencies call `require` at run time, which an ESM bundle does not define.
  banner: {
    js: "import { createRequire as __photoJobsCreateRequire } from 'node:module'; const require = __photoJobsCreateRequire(import.meta.url);",
  },
  logLevel: 'warning',
});

export async function bundleInference(outfile: string): Promise<string> {
  await build(inferenceBundleOptions(outfile));
  return outfile;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  await bundleInference(resolve(process.argv[2] ?? 'dist/handler.mjs'));
}
