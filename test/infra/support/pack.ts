import { execFile } from 'node:child_process';
import { mkdir, readdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * This repository as another project gets it: `npm pack` (its `prepack` builds the client), unpacked into
 * `<scratch>/app/node_modules/photo-jobs` as `npm install <tarball>` would, the dependencies linked from
 * this project's install, since the registry is out of reach. Returns the app folder and the packed files.
 */
export async function installPackedInto(
  scratch: string,
  repoRoot: string,
): Promise<{ app: string; packed: string[] }> {
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', scratch], {
    cwd: repoRoot,
    maxBuffer: 64 * 1024 * 1024,
  });
  // npm prints the prepack script's output before the JSON.
  const [pack] = JSON.parse(stdout.slice(stdout.search(/^\[/m))) as Array<{
    filename: string;
    files: Array<{ path: string }>;
  }>;
  const app = path.join(scratch, 'app');
  const installed = path.join(app, 'node_modules', 'photo-jobs');
  await mkdir(installed, { recursive: true });
  await run('tar', ['-xzf', path.join(scratch, pack!.filename), '-C', installed, '--strip-components=1']);
  for (const entry of await readdir(path.join(repoRoot, 'node_modules'))) {
    if (entry.startsWith('.') || entry === 'photo-jobs') continue;
    await symlink(path.join(repoRoot, 'node_modules', entry), path.join(app, 'node_modules', entry));
  }
  await writeFile(path.join(app, 'package.json'), JSON.stringify({ name: 'storefront', type: 'module' }));
  return { app, packed: pack!.files.map((file) => file.path) };
}
