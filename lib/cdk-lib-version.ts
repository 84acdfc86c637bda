import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { repoRoot } from './config.ts';

/** `2.276.0` -> [2, 276, 0]; the lowest version a `^x.y.z` or `>=x.y.z` range takes. */
const versionParts = (version: string): number[] =>
  (version.match(/\d+\.\d+\.\d+/)?.[0] ?? '0.0.0').split('.').map(Number);

/**
 * Why an app's aws-cdk-lib cannot run the constructs, or undefined when it can: older than the floor of
 * the peer range, or another major version. npm only warns about an unmet peer dependency; without this the
 * app would fail later, deep inside a construct, on whatever the old release lacks.
 */
export function unsupportedCdkLib(installed: string, peerRange: string): string | undefined {
  const have = versionParts(installed);
  const need = versionParts(peerRange);
  const firstDifference = have.findIndex((part, i) => part !== need[i]);
  const fits =
    have[0] === need[0] &&
    (firstDifference === -1 || (have[firstDifference] ?? 0) > (need[firstDifference] ?? 0));
  if (fits) return undefined;
  return (
    `photo-jobs-cdk needs aws-cdk-lib ${peerRange} (its peer dependency), and this app has aws-cdk-lib ` +
    `${installed}. Install a release in that range: npm install aws-cdk-lib@'${peerRange}'`
  );
}

/**
 * Throws the clear message of `unsupportedCdkLib` when the app's aws-cdk-lib is out of the construct
 * package's peer range. In this repository the manifest has no peer range (the lockfile pins aws-cdk-lib),
 * and nothing is checked.
 */
export function assertSupportedCdkLib(): void {
  const manifest = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
    peerDependencies?: Record<string, string>;
  };
  const peerRange = manifest.peerDependencies?.['aws-cdk-lib'];
  if (!peerRange) return;
  const installed = (createRequire(import.meta.url)('aws-cdk-lib/package.json') as { version: string })
    .version;
  const problem = unsupportedCdkLib(installed, peerRange);
  if (problem) throw new Error(problem);
}
