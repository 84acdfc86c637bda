/**
 * `npm run models -- fetch | verify | list`: the model files of models/manifest.ts, fetched from their
 * official sources (or the mirror in MODELS_BASE_URL), verified, and cached in MODELS_DIR or .cache/models.
 */
import { fetchModels, modelStatuses, modelsCacheDir, SERVICE_MODELS } from '#models/fetch.ts';
import { fetchProgress } from '#models/fetch-progress.ts';
import type { ModelId } from '#models/manifest.ts';

const USAGE = `Usage:
  npm run models -- fetch    download, derive or join every model the service needs that is missing or corrupt
  npm run models -- verify   recheck every service model's size and sha256; exit 1 when one is missing or bad
  npm run models -- list     a table of every model of the manifest and where it was found

Environment: MODELS_DIR (where files are cached, default .cache/models), MODELS_BASE_URL (a mirror:
each file is fetched as <base>/<file name>; https, or http to a loopback host).`;

const [command] = process.argv.slice(2);
const cacheDir = modelsCacheDir(process.env.MODELS_DIR);

if (command === 'fetch') {
  try {
    await fetchModels({
      cacheDir,
      baseUrl: process.env.MODELS_BASE_URL || undefined,
      progress: fetchProgress(),
    });
    console.log(
      `models: all ${SERVICE_MODELS.length} service models present and verified (cache ${cacheDir})`,
    );
  } catch (error) {
    console.error((error as Error).message);
    process.exit(1);
  }
} else if (command === 'verify' || command === 'list') {
  const statuses = await modelStatuses(cacheDir, command === 'verify' ? SERVICE_MODELS : undefined);
  const needed = (id: string) => SERVICE_MODELS.includes(id as ModelId);
  // A manifest entry the service does not load (measured and set aside) is listed for its provenance; its
  // absence is not a fault to fix.
  const rows = statuses.map(({ model, file, problem }) => [
    model.id,
    model.version,
    model.license,
    model.bytes === undefined ? '' : `${(model.bytes / 1e6).toFixed(1)} MB`,
    file ?? (problem ? `refused: ${problem}` : 'not found'),
    file ? 'ok' : problem ? 'corrupt' : needed(model.id) ? 'missing' : 'not used',
  ]);
  const header = ['model', 'version', 'license', 'size', 'where found', 'status'];
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => Math.min(row[column]!.length, 90))),
  );
  for (const row of [header, ...rows])
    console.log(row.map((cell, column) => cell.padEnd(widths[column]!)).join('  '));
  const bad = statuses.filter((status) => !status.file && needed(status.model.id));
  if (bad.length > 0) {
    console.error(`\n${bad.length} service model(s) missing or corrupt: run npm run models -- fetch`);
    if (command === 'verify') process.exit(1);
  }
} else {
  console.error(USAGE);
  process.exit(command === undefined || command === '--help' ? 0 : 2);
}
