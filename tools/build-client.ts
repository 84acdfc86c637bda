/**
 * `npm run build:client` (and `prepack`): `photo-jobs/client` as plain JavaScript with type declarations,
 * so another project imports it with plain `node`, no TypeScript loader.
 * - The code: client/index.ts bundled by esbuild into dist/client/index.js (what it runs at all is the
 *   signature check; its other imports are types).
 * - The types: tsc's declarations of client/index.ts and what its types come from (the server's own
 *   schemas, never written twice) under dist/types, their `#core/…` and `./x.ts` specifiers rewritten to
 *   the relative `.js` paths a consumer's TypeScript resolves without this package's import map.
 */
import { execFile } from 'node:child_process';
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';

const root = path.resolve(import.meta.dirname, '..');
const dist = path.join(root, 'dist');
const types = path.join(dist, 'types');
const packageJson = JSON.parse(await readFile(path.join(root, 'package.json'), 'utf8')) as {
  imports: Record<string, string>;
};

await rm(dist, { recursive: true, force: true });
await build({
  entryPoints: [path.join(root, 'client/index.ts')],
  outfile: path.join(dist, 'client/index.js'),
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  // Dependencies stay imports of the installed packages; only this repository's code is bundled.
  packages: 'external',
  logLevel: 'warning',
});
await promisify(execFile)(
  process.execPath,
  [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.client.json'],
  { cwd: root },
);

/** Where a specifier of a declaration file points, as a path relative to that file, ending in `.js`. */
function rewrite(specifier: string, fromFile: string): string {
  let target: string | null = null;
  if (specifier.startsWith('.')) target = path.resolve(path.dirname(fromFile), specifier);
  else {
    for (const [pattern, replacement] of Object.entries(packageJson.imports)) {
      const prefix = pattern.replace(/\*$/, '');
      if (pattern.endsWith('*') ? specifier.startsWith(prefix) : specifier === pattern) {
        const mapped = pattern.endsWith('*')
          ? replacement.replace('*', specifier.slice(prefix.length))
          : replacement;
        target = path.join(types, mapped);
      }
    }
  }
  if (!target) return specifier;
  const relative = path.relative(path.dirname(fromFile), target).replace(/\.ts$/, '.js');
  return relative.startsWith('.') ? relative : `./${relative}`;
}

async function* declarations(dir: string): AsyncGenerator<string> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* declarations(full);
    else if (entry.name.endsWith('.d.ts')) yield full;
  }
}

let count = 0;
for await (const file of declarations(types)) {
  const text = await readFile(file, 'utf8');
  const rewritten = text.replace(
    /(from\s+|import\(\s*)(['"])([^'"]+)\2/g,
    (_all, lead: string, quote: string, specifier: string) =>
      `${lead}${quote}${rewrite(specifier, file)}${quote}`,
  );
  await writeFile(file, rewritten);
  count++;
}
console.log(`photo-jobs/client: dist/client/index.js and ${count} declaration files in dist/types`);
