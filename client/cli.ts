/**
 * `npm run cli -- jobs …` and `npm run cli -- batches …`: submit work to a running service and wait for it,
 * over the typed client (the same HTTP API any integration uses).
 */
import { stat, writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import cliProgress from 'cli-progress';
import { MAX_INLINE_BODY_BYTES } from '#core/limits/request.ts';
import { type Batch, createClient, type JobEnvelope, type PhotoJobsClient, PhotoJobsError } from './index.ts';

/** The usage, under the program that runs the CLI: `npm run cli --` here, `photo-jobs` from the client package. */
const clientUsage = (program: string) => `Usage:
  ${program} jobs create --mode MODE (--file PATH | --url URL | --asset-id ID | --upload-id ID)
                 [--background NAME] [--background-file PATH] [--plate-color '#RRGGBB']
                 [--plate-smoothing true|false] [--plate-mask-only true|false] [--require-plate]
                 [--webhook-url URL] [IMAGE OPTIONS] [--idempotency-key KEY] [--wait [--out PATH] [--timeout SECONDS]] [--json]
  ${program} jobs get JOB_ID [--json]
  ${program} batches create --archive PATH [--mode MODE] [--background NAME] [--background-file PATH]
                 [--plate-color '#RRGGBB'] [--plate-smoothing true|false] [--plate-mask-only true|false]
                 [IMAGE OPTIONS] [--wait [--out PATH]] [--json]
  ${program} batches get BATCH_ID [--json]

image options: --format jpg|png|webp  --max-width PIXELS  --framing keep|center  --shadow true|false
               --aspect keep|4:3|3:2|16:9|1:1 (the canvas of a centred car; default 4:3)
               (--background transparent gives the car alone as a PNG with alpha)
common: --base-url URL (default $PHOTO_JOBS_BASE_URL, else http://127.0.0.1:$PORT or 3000)
        --key KEY (default $PHOTO_JOBS_API_KEY)`;

const options = {
  'base-url': { type: 'string' },
  key: { type: 'string' },
  mode: { type: 'string' },
  file: { type: 'string' },
  url: { type: 'string' },
  'asset-id': { type: 'string' },
  'upload-id': { type: 'string' },
  background: { type: 'string' },
  'background-file': { type: 'string' },
  'plate-color': { type: 'string' },
  'plate-smoothing': { type: 'string' },
  'plate-mask-only': { type: 'string' },
  'require-plate': { type: 'boolean', default: false },
  'webhook-url': { type: 'string' },
  format: { type: 'string' },
  'max-width': { type: 'string' },
  framing: { type: 'string' },
  shadow: { type: 'string' },
  aspect: { type: 'string' },
  'idempotency-key': { type: 'string' },
  archive: { type: 'string' },
  wait: { type: 'boolean', default: false },
  out: { type: 'string' },
  timeout: { type: 'string' },
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', default: false },
} as const;

/** The image options as the server reads them; the server checks the values (a 400 names the field). */
function imageOptions(values: {
  format?: string;
  'max-width'?: string;
  framing?: string;
  shadow?: string;
  aspect?: string;
}) {
  return {
    format: values.format as never,
    max_width: values['max-width'] as never,
    framing: values.framing as never,
    shadow: values.shadow as never,
    aspect: values.aspect as never,
  };
}

/** Runs one command; resolves to the process exit code (0 done, 1 the work failed, 2 bad usage or request). */
export async function runClientCli(argv: string[], program = 'npm run cli --'): Promise<number> {
  let parsed: ReturnType<typeof parseArgs<{ options: typeof options; allowPositionals: true }>>;
  try {
    parsed = parseArgs({ args: argv, options, allowPositionals: true });
  } catch (error) {
    console.error(`${(error as Error).message}\n\n${clientUsage(program)}`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    console.log(clientUsage(program));
    return 0;
  }
  const [group, command, id] = positionals;
  const baseUrl =
    values['base-url'] ?? process.env.PHOTO_JOBS_BASE_URL ?? `http://127.0.0.1:${process.env.PORT ?? 3000}`;
  const client = createClient({ baseUrl, apiKey: values.key ?? process.env.PHOTO_JOBS_API_KEY });
  // The service answers result paths; a terminal user wants a URL to open or curl.
  const absolute = (route: string) => new URL(route, baseUrl).toString();
  const print = (value: object, text: string) => console.log(values.json ? JSON.stringify(value) : text);
  const progress = progressReporter(!values.json && Boolean(process.stderr.isTTY));
  const timeoutMs = values.timeout ? Number(values.timeout) * 1000 : undefined;

  try {
    if (group === 'jobs' && command === 'create') {
      const source = values.file
        ? await viaUploadIfLarge(client, values.file)
        : { upload_id: values['upload-id'] };
      let job = await client.createJob(
        {
          mode: values.mode as JobEnvelope['operation'] | undefined,
          ...('path' in source ? { file: source.path } : { upload_id: source.upload_id }),
          url: values.url,
          asset_id: values['asset-id'],
          background: values.background as never,
          background_file: values['background-file'],
          plate_color: values['plate-color'],
          plate_smoothing: values['plate-smoothing'] as never,
          plate_mask_only: values['plate-mask-only'] as never,
          ...imageOptions(values),
          webhook_url: values['webhook-url'],
          ...(values['require-plate'] ? { require_plate: true } : {}),
        },
        { idempotencyKey: values['idempotency-key'] },
      );
      if (!values.wait) {
        print(job, `${job.id} ${job.status} (${job.cost_credits} credits reserved)`);
        return 0;
      }
      progress.start(`${job.id} ${job.operation}`, 1);
      job = await client.waitForJob(job.id, {
        timeoutMs,
        onProgress: (state) => progress.update(0, state.status),
      });
      progress.stop(job.status === 'success' ? 1 : 0, job.status);
      if (job.status === 'success' && values.out && job.url) {
        await writeFile(values.out, await client.download(job.url));
      }
      print(job, describeJob(job, absolute, values.out));
      return job.status === 'success' ? 0 : 1;
    }
    if (group === 'jobs' && command === 'get' && id) {
      const job = await client.getJob(id);
      print(job, describeJob(job, absolute));
      return 0;
    }
    if (group === 'batches' && command === 'create') {
      if (!values.archive) throw new UsageError('give --archive PATH');
      const source = await viaUploadIfLarge(client, values.archive);
      const created = await client.createBatch({
        ...('path' in source ? { archive: source.path } : source),
        mode: values.mode as never,
        background: values.background as never,
        background_file: values['background-file'],
        plate_color: values['plate-color'],
        plate_smoothing: values['plate-smoothing'] as never,
        plate_mask_only: values['plate-mask-only'] as never,
        ...imageOptions(values),
      });
      let batch = created.batch;
      if (!values.wait) {
        print(created, `${batch.id} ${batch.status}: ${batch.counts.total} photos`);
        return 0;
      }
      progress.start(`${batch.id} ${batch.mode}`, batch.counts.total);
      batch = await client.waitForBatch(batch.id, {
        timeoutMs,
        onProgress: (state) => progress.update(doneOf(state), state.status, state.counts.total),
      });
      progress.stop(doneOf(batch), batch.status);
      if (values.out && batch.counts.succeeded > 0) {
        await writeFile(values.out, await client.downloadBatch(batch.id));
      }
      print({ batch }, describeBatch(batch, values.out));
      return batch.counts.failed === 0 && batch.status === 'completed' ? 0 : 1;
    }
    if (group === 'batches' && command === 'get' && id) {
      const batch = await client.getBatch(id);
      print({ batch }, describeBatch(batch));
      return 0;
    }
    throw new UsageError(`unknown command: ${positionals.join(' ')}`);
  } catch (error) {
    progress.abort();
    if (error instanceof UsageError) {
      console.error(`${error.message}\n\n${clientUsage(program)}`);
      return 2;
    }
    if (error instanceof PhotoJobsError) {
      console.error(`${error.status} (code ${error.code}): ${error.message}`);
      return 2;
    }
    const unreachable = unreachableReason(error);
    if (unreachable) {
      console.error(
        `No photo-jobs server answers at ${baseUrl} (${unreachable}): start one with npm start, ` +
          'or point elsewhere with --base-url URL or PHOTO_JOBS_BASE_URL',
      );
      return 2;
    }
    throw error;
  }
}

/**
 * A file too large for a request body goes by direct upload (POST /uploads) and is named by its
 * `upload_id`; a smaller one is sent in the request, which costs one round trip less.
 */
async function viaUploadIfLarge(
  client: PhotoJobsClient,
  file: string,
): Promise<{ path: string } | { upload_id: string | undefined }> {
  if ((await stat(file)).size <= MAX_INLINE_BODY_BYTES - FORM_OVERHEAD_BYTES) return { path: file };
  console.error(`${file}: larger than a request body may be, sending it by direct upload`);
  return { upload_id: (await client.upload(file)).upload_id };
}
/** Room left in a request body for the form's other fields and boundaries. */
const FORM_OVERHEAD_BYTES = 64 * 1024;

/** Why fetch could not reach the server (its `cause` holds the socket error), or null for other errors. */
function unreachableReason(error: unknown): string | null {
  if (!(error instanceof TypeError)) return null;
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  const code = cause?.code;
  if (code === 'ECONNREFUSED') return 'connection refused';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'host not found';
  if (code === 'ECONNRESET' || code === 'ETIMEDOUT' || code === 'EHOSTUNREACH') return code;
  return error.message === 'fetch failed' ? (cause?.message ?? 'fetch failed') : null;
}

class UsageError extends Error {
  override readonly name = 'UsageError';
}

const doneOf = (batch: Batch) =>
  batch.counts.succeeded + batch.counts.failed + batch.counts.skipped + batch.counts.cancelled;

function describeJob(job: JobEnvelope, absolute: (route: string) => string, savedTo?: string): string {
  const lines = [`${job.id} ${job.operation}: ${job.status}`];
  if (job.error?.message) lines.push(`  error ${job.error.code}: ${job.error.message}`);
  if (job.url) lines.push(`  result ${absolute(job.url)}${savedTo ? ` (saved to ${savedTo})` : ''}`);
  // Corners in the result's pixels, rounded: enough to find the plate on the saved file.
  for (const { corners, score } of job.output?.plates ?? []) {
    const at = corners.map(([x, y]) => `${Math.round(x)},${Math.round(y)}`).join(' ');
    lines.push(`  plate at ${at} (score ${score})`);
  }
  if (job.output?.plate_hidden === false && job.operation === 'studio_background') {
    lines.push(
      '  WARNING plate may be visible: the car shows its front or rear but no plate was hidden (--require-plate fails such a job)',
    );
  }
  const analysis = job.output?.analysis;
  if (analysis?.photo_type)
    lines.push(`  photo type ${analysis.photo_type.label} (${analysis.photo_type.conf}%)`);
  if (analysis?.view) lines.push(`  view ${analysis.view.label} (${analysis.view.conf}%)`);
  if (job.quota) lines.push(`  credits left ${job.quota.remaining}`);
  return lines.join('\n');
}

function describeBatch(batch: Batch, savedTo?: string): string {
  const { total, succeeded, failed, skipped, cancelled } = batch.counts;
  return (
    `${batch.id} ${batch.mode}: ${batch.status}, ${succeeded} of ${total} succeeded, ${failed} failed, ` +
    `${skipped} skipped, ${cancelled} cancelled${savedTo ? `; results saved to ${savedTo}` : ''}` +
    (batch.error ? `\n  error ${batch.error.code}: ${batch.error.message}` : '')
  );
}

/**
 * A progress bar on a terminal, cleared when done; otherwise one line at the start and on each change of
 * state. The final state is left to the summary line, so that it is said once.
 */
function progressReporter(tty: boolean) {
  let bar: cliProgress.SingleBar | null = null;
  let label = '';
  let lastState = '';
  return {
    start(name: string, total: number) {
      label = name;
      if (tty) {
        bar = new cliProgress.SingleBar(
          {
            format: `${name} [{bar}] {value}/{total} {state} {duration_formatted}`,
            stream: process.stderr,
            clearOnComplete: true,
          },
          cliProgress.Presets.shades_classic,
        );
        bar.start(total, 0, { state: 'queued' });
      } else {
        console.error(`${name}: started`);
      }
    },
    update(done: number, state: string, total?: number) {
      // A batch knows its photo count for sure only once its archive is unpacked.
      if (bar && total !== undefined && total !== bar.getTotal()) bar.setTotal(total);
      if (bar) bar.update(done, { state });
      else if (state !== lastState) console.error(`${label}: ${state}`);
      lastState = state;
    },
    stop(done: number, state: string) {
      if (bar) {
        bar.update(done, { state });
        bar.stop();
      }
    },
    abort() {
      bar?.stop();
    },
  };
}
