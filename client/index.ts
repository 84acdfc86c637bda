/**
 * The typed client of photo-jobs: `import { createClient, verifyWebhook } from 'photo-jobs/client'`.
 * It speaks the public HTTP API only; its types are the server's own response schemas (never written twice).
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type * as z from 'zod';
import type { UploadContentType as ContentTypeOfUpload } from '#core/uploads/upload.ts';
import { verifySignature } from '#core/webhooks/signature.ts';
import type { requestSchemas, responseSchemas } from '../functions/api/openapi.ts';

type Out<Name extends keyof typeof responseSchemas> = z.output<(typeof responseSchemas)[Name]>;
export type Operation = Out<'Operation'>;
export type JobStatus = Out<'JobStatus'>;
export type Job = Out<'Job'>;
export type JobEnvelope = Out<'JobEnvelope'>;
/** A job just created: its envelope and `status_url`, the path to poll. */
export type JobCreated = Out<'JobCreated'>;
export type JobList = Out<'JobList'>;
export type Batch = Out<'Batch'>;
export type BatchCreated = Out<'BatchCreated'>;
export type BatchEnvelope = Out<'BatchEnvelope'>;
export type Quota = Out<'Quota'>;
export type Analysis = Out<'Analysis'>;
export type ErrorBody = Out<'ErrorBody'>;
/** The JSON job input the server validates (`JobInput`), with the client's ways of sending a file added. */
export type JobInputJson = z.input<(typeof requestSchemas)['JobInput']>;

/** A photo or an archive: a file path, bytes, or a Blob (a browser File is a Blob). */
export type Upload = string | Uint8Array | Blob;

export type CreateJobInput = Omit<JobInputJson, 'mode'> & {
  mode?: Operation;
  file?: Upload;
  /** The custom background (JPG, PNG or WEBP); takes priority over `background`. */
  background_file?: Upload;
};

/** The batch form the server validates (`BatchForm`), with `archive` and `background_file` as anything `Upload` takes. */
export type CreateBatchInput = Omit<
  z.input<(typeof requestSchemas)['BatchForm']>,
  'archive' | 'background_file'
> & {
  archive?: Upload;
  /** A custom background for every photo (JPG, PNG or WEBP); needs `archive` (a form). */
  background_file?: Upload;
};

export type UploadCreated = Out<'UploadCreated'>;
/** The types POST /uploads takes (any other is a 415). */
export type UploadContentType = ContentTypeOfUpload;

export interface ClientOptions {
  /** The service root (`http://127.0.0.1:3000`) or its API base (`.../api/v1`). */
  baseUrl: string;
  /** Without a key, requests run on a guest trial (the session cookie is not kept by this client). */
  apiKey?: string;
  /** Injected for tests or other runtimes; defaults to the global fetch. */
  fetch?: typeof fetch;
}

export interface WaitOptions<T> {
  /** Give up after this long (default 10 minutes for a job, 1 hour for a batch). */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Called with every state read while waiting. */
  onProgress?: (state: T) => void;
}

const TERMINAL_JOB: ReadonlySet<string> = new Set(['success', 'failed', 'cancelled']);
const TERMINAL_BATCH: ReadonlySet<string> = new Set(['completed', 'cancelled', 'failed']);

/**
 * How `waitForJob` polls: the first wait, each next one times `factor`, none over `maxDelayMs`. No job ends
 * in under about half a second (the workflow's tasks alone), so the first wait is a second and the waits grow
 * slowly: over jobs of 0.3 to 12 s a job is seen as late on average as with 250 ms growing by half up to
 * 3 s, with a third fewer requests (each one an API request, a function run and table reads; `npm run cost`).
 */
export const JOB_POLLING = { firstDelayMs: 1000, factor: 1.2, maxDelayMs: 2000 } as const;

/** Every non-2xx answer of the service, with the spec's error body (`code`, `message`). */
export class PhotoJobsError extends Error {
  override readonly name = 'PhotoJobsError';
  constructor(
    readonly status: number,
    readonly code: number,
    message: string,
    readonly retryAfterSeconds: number | null = null,
  ) {
    super(message);
  }
}

export class WaitTimeoutError extends Error {
  override readonly name = 'WaitTimeoutError';
}

/**
 * Checks a webhook delivery as a receiver should: the raw body (bytes as received, not re-serialized), the
 * `X-Service-Signature` header, and the key's signing secret; false when the signature does not match or its
 * timestamp is outside `toleranceSeconds` (default 300) of now.
 */
export function verifyWebhook(
  rawBody: string | Uint8Array,
  signatureHeader: string | null | undefined,
  secret: string,
  options: { toleranceSeconds?: number; nowSeconds?: number } = {},
): boolean {
  return verifySignature({
    header: signatureHeader,
    body: typeof rawBody === 'string' ? rawBody : Buffer.from(rawBody),
    secret,
    ...options,
  });
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });

async function toBlob(upload: Upload, contentType?: string): Promise<{ blob: Blob; name: string }> {
  if (typeof upload === 'string') {
    return { blob: new Blob([await readFile(upload)], { type: contentType }), name: path.basename(upload) };
  }
  if (upload instanceof Blob) return { blob: upload, name: (upload as { name?: string }).name ?? 'upload' };
  return { blob: new Blob([upload], { type: contentType }), name: 'upload' };
}

const imageTypeOf = (name: string) =>
  /\.png$/i.test(name) ? 'image/png' : /\.webp$/i.test(name) ? 'image/webp' : 'image/jpeg';

export type PhotoJobsClient = ReturnType<typeof createClient>;

export function createClient(options: ClientOptions) {
  const origin = new URL(options.baseUrl).origin;
  const apiBase = `${options.baseUrl.replace(/\/+$/, '').replace(/\/api\/v1$/, '')}/api/v1`;
  const doFetch = options.fetch ?? fetch;
  const headers = (extra: Record<string, string> = {}) => ({
    ...(options.apiKey ? { 'x-api-key': options.apiKey } : {}),
    ...extra,
  });

  async function failure(response: Response): Promise<PhotoJobsError> {
    const text = await response.text();
    let body: Partial<ErrorBody> = {};
    try {
      body = JSON.parse(text);
    } catch {}
    const retryAfter = response.headers.get('retry-after');
    return new PhotoJobsError(
      response.status,
      typeof body.code === 'number' ? body.code : response.status,
      body.message ?? (text || response.statusText),
      retryAfter === null ? null : Number(retryAfter),
    );
  }

  async function request<T>(route: string, init: RequestInit = {}): Promise<T> {
    const response = await doFetch(`${apiBase}${route}`, {
      ...init,
      headers: headers(init.headers as Record<string, string>),
    });
    if (!response.ok) throw await failure(response);
    return (await response.json()) as T;
  }

  /** Bytes of a path the service returned (`url`, `plate_mask_url`, a batch download), redirects followed. */
  async function download(route: string, signal?: AbortSignal): Promise<Uint8Array> {
    const target = route.startsWith('http') ? route : `${origin}${route}`;
    const response = await doFetch(target, { headers: headers(), signal });
    if (!response.ok) throw await failure(response);
    return new Uint8Array(await response.arrayBuffer());
  }

  async function createJob(
    input: CreateJobInput,
    init: { idempotencyKey?: string; signal?: AbortSignal } = {},
  ): Promise<JobCreated | JobEnvelope> {
    const extra: Record<string, string> = init.idempotencyKey
      ? { 'idempotency-key': init.idempotencyKey }
      : {};
    const { file, background_file, ...fields } = input;
    if (!file && !background_file) {
      return request('/jobs', {
        method: 'POST',
        body: JSON.stringify(fields),
        headers: { ...extra, 'content-type': 'application/json' },
        signal: init.signal,
      });
    }
    const form = new FormData();
    for (const [name, value] of Object.entries(fields)) {
      if (value !== undefined && value !== null) form.append(name, String(value));
    }
    for (const [name, upload] of [
      ['background_file', background_file],
      ['file', file],
    ] as const) {
      if (!upload) continue;
      const type = typeof upload === 'string' ? imageTypeOf(upload) : 'image/jpeg';
      const { blob, name: fileName } = await toBlob(upload, type);
      form.append(name, blob, fileName);
    }
    return request('/jobs', { method: 'POST', body: form, headers: extra, signal: init.signal });
  }

  const getJob = (jobId: string): Promise<JobEnvelope> => request(`/jobs/${encodeURIComponent(jobId)}`);

  /** Polls with a backoff (`JOB_POLLING`) until the job is `success`, `failed` or `cancelled`. */
  async function waitForJob(jobId: string, wait: WaitOptions<JobEnvelope> = {}): Promise<JobEnvelope> {
    const deadline = Date.now() + (wait.timeoutMs ?? 10 * 60_000);
    const { firstDelayMs, factor, maxDelayMs } = JOB_POLLING;
    for (let delay: number = firstDelayMs; ; delay = Math.min(delay * factor, maxDelayMs)) {
      const job = await getJob(jobId);
      wait.onProgress?.(job);
      if (TERMINAL_JOB.has(job.status)) return job;
      if (Date.now() + delay > deadline)
        throw new WaitTimeoutError(
          `Job ${jobId} is still ${job.status} after ${wait.timeoutMs ?? 600_000} ms`,
        );
      await sleep(delay, wait.signal);
    }
  }

  /** Every job of the key, newest first, page after page (`GET /jobs` with its cursor). */
  async function* listJobs(query: { status?: JobStatus; pageSize?: number } = {}): AsyncGenerator<Job> {
    let before: number | null = null;
    do {
      const params = new URLSearchParams({ limit: String(query.pageSize ?? 100) });
      if (query.status) params.set('status', query.status);
      if (before !== null) params.set('before', String(before));
      const page: JobList = await request(`/jobs?${params}`);
      yield* page.jobs;
      before = page.next_cursor;
    } while (before !== null);
  }

  /** A batch of a ZIP sent in the request (`archive`, up to about 4.45 MiB inline: the service's `MAX_INLINE_BODY_BYTES`) or uploaded before (`upload_id`). */
  async function createBatch(input: CreateBatchInput): Promise<BatchCreated> {
    const { archive, background_file, ...fields } = input;
    if (!archive) {
      if (background_file) throw new TypeError('background_file travels in a form: send the archive with it');
      return request('/batches', {
        method: 'POST',
        body: JSON.stringify(fields),
        headers: { 'content-type': 'application/json' },
      });
    }
    const form = new FormData();
    for (const [name, value] of Object.entries(fields)) {
      if (value !== undefined) form.append(name, String(value));
    }
    if (background_file) {
      const type = typeof background_file === 'string' ? imageTypeOf(background_file) : 'image/jpeg';
      const background = await toBlob(background_file, type);
      form.append('background_file', background.blob, background.name);
    }
    const { blob, name } = await toBlob(archive, 'application/zip');
    form.append('archive', blob, name.endsWith('.zip') ? name : `${name}.zip`);
    return request('/batches', { method: 'POST', body: form });
  }

  /**
   * A direct upload (POST /uploads, then one PUT to the storage link it answers), for photos and archives
   * too large to send in a request; name the returned `upload_id` in `createJob` or `createBatch`.
   */
  async function upload(
    file: Upload,
    init: { contentType?: UploadContentType; signal?: AbortSignal } = {},
  ): Promise<UploadCreated> {
    const guessed = typeof file === 'string' && /\.zip$/i.test(file) ? 'application/zip' : undefined;
    const contentType =
      init.contentType ?? guessed ?? (typeof file === 'string' ? imageTypeOf(file) : undefined);
    const { blob, name } = await toBlob(file, contentType);
    const type = contentType ?? (blob.type || 'image/jpeg');
    const opened: UploadCreated = await request('/uploads', {
      method: 'POST',
      body: JSON.stringify({ content_type: type, filename: name, size: blob.size }),
      headers: { 'content-type': 'application/json' },
      signal: init.signal,
    });
    // The storage link carries its own signature: no key goes with it.
    const response = await doFetch(opened.url, {
      method: opened.method,
      headers: opened.headers,
      body: blob,
      signal: init.signal,
    });
    if (!response.ok) throw await failure(response);
    return opened;
  }

  const getBatch = async (batchId: string): Promise<Batch> =>
    (await request<BatchEnvelope>(`/batches/${encodeURIComponent(batchId)}`)).batch;

  const controlBatch = async (batchId: string, action: 'pause' | 'resume' | 'cancel' | 'retry') =>
    (await request<BatchEnvelope>(`/batches/${encodeURIComponent(batchId)}/${action}`, { method: 'POST' }))
      .batch;

  /**
   * Polls every second until the batch is `completed`, `cancelled` or `failed` (its archive could not be
   * unpacked); a paused batch is still waited for.
   */
  async function waitForBatch(batchId: string, wait: WaitOptions<Batch> = {}): Promise<Batch> {
    const deadline = Date.now() + (wait.timeoutMs ?? 60 * 60_000);
    for (;;) {
      const batch = await getBatch(batchId);
      wait.onProgress?.(batch);
      if (TERMINAL_BATCH.has(batch.status)) return batch;
      if (Date.now() + 1000 > deadline)
        throw new WaitTimeoutError(`Batch ${batchId} is still ${batch.status}`);
      await sleep(1000, wait.signal);
    }
  }

  /** The results as one ZIP; waits while the service answers 202 (the archive is being built). */
  async function downloadBatch(batchId: string, init: { partial?: boolean; signal?: AbortSignal } = {}) {
    const route = `${apiBase}/batches/${encodeURIComponent(batchId)}/download${init.partial ? '?partial=true' : ''}`;
    for (;;) {
      const response = await doFetch(route, { headers: headers(), signal: init.signal });
      if (response.status === 202) {
        await response.arrayBuffer();
        await sleep(Number(response.headers.get('retry-after') ?? 1) * 1000, init.signal);
        continue;
      }
      if (!response.ok) throw await failure(response);
      return new Uint8Array(await response.arrayBuffer());
    }
  }

  const getQuota = (): Promise<Quota> => request('/quota');

  return {
    createJob,
    getJob,
    waitForJob,
    listJobs,
    cancelJob: (jobId: string): Promise<JobEnvelope> =>
      request(`/jobs/${encodeURIComponent(jobId)}/cancel`, { method: 'POST' }),
    retryJob: (jobId: string): Promise<JobEnvelope> =>
      request(`/jobs/${encodeURIComponent(jobId)}/retry`, { method: 'POST' }),
    createBatch,
    upload,
    getBatch,
    controlBatch,
    waitForBatch,
    downloadBatch,
    download,
    getQuota,
  };
}
