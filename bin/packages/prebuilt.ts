/**
 * What CDK built from this repository that the construct package carries (lib/config.ts `prebuilt`): each
 * zip function's bundle, zipped, and the inference image's build context.
 */
import { createWriteStream } from 'node:fs';
import { cp, mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import yazl from 'yazl';
import { buildApp, type CfnTemplate } from '../../lib/app.ts';
import { handlerMetadataKey, inference, prebuilt, stackNames } from '../../lib/config.ts';

/** A zip with fixed times and modes, its entries sorted: the same bundle gives the same bytes (and hash). */
async function zipFolder(folder: string, zipFile: string) {
  const files: string[] = [];
  const walk = async (dir: string) => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) await walk(full);
      else files.push(full);
    }
  };
  await walk(folder);
  const zip = new yazl.ZipFile();
  for (const file of files.sort())
    zip.addFile(file, path.relative(folder, file).split(path.sep).join('/'), {
      mtime: new Date('1980-01-02T00:00:00Z'),
      mode: 0o100644,
    });
  zip.end();
  await mkdir(path.dirname(zipFile), { recursive: true });
  await pipeline(zip.outputStream, createWriteStream(zipFile));
}

/**
 * Keeps what CDK built from this repository's app with bundling on (`prebuilt/` of config.ts): from
 * `assembly`, a cloud assembly synthesized so already, or from a synth of its own.
 */
export async function buildPrebuilt(dir: string, assembly?: string) {
  const outdir = assembly ?? (await mkdtemp(path.join(tmpdir(), 'photo-jobs-package-synth-')));
  try {
    if (!assembly) buildApp({ bundle: true, validate: false, outdir }).app.synth();
    const template = JSON.parse(
      await readFile(path.join(outdir, `${stackNames.service}.template.json`), 'utf8'),
    ) as CfnTemplate;
    // Where CDK staged each asset, by its hash (the template names an asset by its hash in Code).
    const assets = JSON.parse(
      await readFile(path.join(outdir, `${stackNames.service}.assets.json`), 'utf8'),
    ) as {
      files: Record<string, { source: { path: string } }>;
      dockerImages: Record<string, { source: { directory: string } }>;
    };
    const stagedBy = new Map<string, string>([
      ...Object.entries(assets.files).map(([hash, asset]) => [hash, asset.source.path] as const),
      ...Object.entries(assets.dockerImages).map(([hash, asset]) => [hash, asset.source.directory] as const),
    ]);
    for (const resource of Object.values(template.Resources)) {
      const handler = resource.Metadata?.[handlerMetadataKey] as string | undefined;
      if (!handler) continue;
      const code = JSON.stringify(resource.Properties?.Code);
      const hash = [...stagedBy.keys()].find((candidate) => code.includes(candidate));
      if (!hash) throw new Error(`no staged asset for ${handler}`);
      const staged = path.join(outdir, stagedBy.get(hash)!);
      if (handler === inference.handler)
        await cp(staged, path.join(dir, prebuilt.inferenceContext), {
          recursive: true,
        });
      else await zipFolder(staged, path.join(dir, prebuilt.bundleOf(handler)));
    }
  } finally {
    if (!assembly) await rm(outdir, { recursive: true, force: true });
  }
}
