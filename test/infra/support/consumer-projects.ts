import { execFile, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from '../../../lib/config.ts';

/**
 * The projects our users start from, made by the real tools: `cdk init app` (the CLI in our lockfile)
 * in TypeScript and JavaScript, and `npm init` with TypeScript for a client user. The package tests
 * install into them offline, from npm's cache; `npm run warm-consumers` fills that cache once from the
 * registry (.ci/run does, before `npm test`), since no test may reach past loopback.
 */
const run = promisify(execFile);
const rootManifest = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as {
  devDependencies: Record<string, string>;
};

export type ConsumerKind = 'cdk-typescript' | 'cdk-javascript' | 'client-typescript';
export const CONSUMER_KINDS: readonly ConsumerKind[] = [
  'cdk-typescript',
  'cdk-javascript',
  'client-typescript',
];

/** What a client user's TypeScript project installs: the compiler and Node's types, as this repository. */
const clientDevDependencies = {
  typescript: rootManifest.devDependencies.typescript!,
  '@types/node': rootManifest.devDependencies['@types/node']!,
};

/** Written by the warm-up; the tests run only where it matches what they would install. */
const warmMarker = path.join(repoRoot, '.cache', 'consumer-projects.json');
const warmFingerprint = JSON.stringify({
  cdk: rootManifest.devDependencies['aws-cdk'],
  client: clientDevDependencies,
});

export const consumersAreWarm = (): boolean =>
  existsSync(warmMarker) && readFileSync(warmMarker, 'utf8') === warmFingerprint;
export async function markConsumersWarm(): Promise<void> {
  await mkdir(path.dirname(warmMarker), { recursive: true });
  await writeFile(warmMarker, warmFingerprint);
}

/** `unshare -n` where it works: a command in a network namespace of its own cannot send a packet anywhere. */
const isolated = spawnSync('unshare', ['-n', 'true']).status === 0;

/**
 * Runs a tool as a user would, with every call home it makes turned off (notices, version check,
 * telemetry, the instance metadata service), and without a network where the machine allows it.
 */
export async function runOffline(
  command: string,
  args: string[],
  options: { cwd: string; env?: Record<string, string> },
): Promise<{ stdout: string; stderr: string }> {
  const env = {
    ...process.env,
    CDK_DISABLE_VERSION_CHECK: 'true',
    CDK_DISABLE_CLI_TELEMETRY: 'true',
    AWS_EC2_METADATA_DISABLED: 'true',
    npm_config_offline: 'true',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    npm_config_update_notifier: 'false',
    ...options.env,
  };
  const [file, argv] = isolated ? ['unshare', ['-n', command, ...args]] : [command, args];
  try {
    return await run(file, argv, { cwd: options.cwd, env, maxBuffer: 64 * 1024 * 1024 });
  } catch (error) {
    // tsc and the CDK CLI say what went wrong on stdout as often as on stderr.
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    throw Object.assign(
      new Error(`${path.basename(command)} ${args.join(' ')} failed:\n${stdout}\n${stderr}`),
      {
        stdout,
        stderr,
      },
    );
  }
}

/**
 * Makes a consumer project in `dir` (a new folder; its name is the app's name) with the real tool, not
 * installed yet. Returns the folder.
 */
export async function makeConsumer(kind: ConsumerKind, dir: string): Promise<string> {
  await mkdir(dir, { recursive: true });
  if (kind === 'client-typescript') {
    await runOffline('npm', ['init', '-y'], { cwd: dir });
    const manifestFile = path.join(dir, 'package.json');
    const manifest = JSON.parse(readFileSync(manifestFile, 'utf8'));
    await writeFile(
      manifestFile,
      JSON.stringify({ ...manifest, type: 'module', devDependencies: clientDevDependencies }, null, 2),
    );
    return dir;
  }
  const cdk = path.join(repoRoot, 'node_modules', '.bin', 'cdk');
  const language = kind === 'cdk-typescript' ? 'typescript' : 'javascript';
  await runOffline(cdk, ['init', 'app', '--language', language, '--generate-only', '--no-notices'], {
    cwd: dir,
  });
  return dir;
}

/** `npm install [specs]` in a consumer project, from npm's cache only. */
export async function installOffline(dir: string, specs: string[] = []): Promise<void> {
  try {
    await runOffline('npm', ['install', '--offline', '--no-audit', '--no-fund', ...specs], { cwd: dir });
  } catch (error) {
    const message = (error as { stderr?: string }).stderr ?? String(error);
    if (/ENOTCACHED/.test(message))
      throw new Error(
        `npm's cache lacks what ${path.basename(dir)} installs: run npm run warm-consumers\n${message}`,
      );
    throw error;
  }
}

/** Bytes of every file under a folder, as installed. */
export async function folderBytes(folder: string): Promise<number> {
  if (!existsSync(folder)) return 0;
  let total = 0;
  for (const entry of await readdir(folder, { withFileTypes: true, recursive: true }))
    if (entry.isFile()) total += (await stat(path.join(entry.parentPath, entry.name))).size;
  return total;
}
