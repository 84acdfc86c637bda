/**
 * `npm run warm-consumers`: installs each consumer project once from the npm registry, so that npm's cache
 * holds what the package tests then install offline (support/consumer-projects.ts). An install step, like
 * `npm ci`: .ci/run runs it before `npm test`; no test does.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { CONSUMER_KINDS, makeConsumer, markConsumersWarm } from './consumer-projects.ts';

const scratch = await mkdtemp(path.join(tmpdir(), 'photo-jobs-warm-'));
try {
  // At once: the installs wait on the registry far more than on the CPU, and npm's cache takes
  // concurrent writers.
  await Promise.all(
    CONSUMER_KINDS.map(async (kind) => {
      const dir = await makeConsumer(kind, path.join(scratch, kind, 'storefront'));
      await promisify(execFile)('npm', ['install', '--no-audit', '--no-fund'], {
        cwd: dir,
        maxBuffer: 64 << 20,
      });
      console.log(`${kind}: npm's cache holds what it installs`);
    }),
  );
  await markConsumersWarm();
} finally {
  await rm(scratch, { recursive: true, force: true });
}
