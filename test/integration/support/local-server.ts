import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { systemClock, tableAdapters } from '#aws/wiring.ts';
import { parseConfig } from '#config';
import { createApiKey } from '#core/use-cases/create-api-key.ts';
import { LOCAL_ADMIN_CREDENTIALS } from '../../../local/iam.ts';
import { LOCAL_BUCKET, LOCAL_TABLE, readRunningStack } from '../../../local/stack.ts';
import { localRunningExecutions } from '../../../local/stepfunctions.ts';
import { plainAssembly } from '../../support/assembly.ts';
import { eventually } from '../../support/eventually.ts';
import { expectDocumented } from './contract.ts';

export const REPO_ROOT = path.resolve(import.meta.dirname, '..', '..', '..');
export const SHARED = path.resolve(REPO_ROOT, '..', 'shared');
export const hasShared = existsSync(path.join(SHARED, 'models')) && existsSync(path.join(SHARED, 'eval'));

/**
 * For `startServer` where the subject is the API, not vision: the inference function runs the marker runner
 * (test/support/marker-vision.ts) instead of the models, so a job takes milliseconds and its outcome is
 * decided by the photo (`markedPhoto`). The vision tests, the smoke test and the console keep the models.
 */
export const WITHOUT_MODELS = { LOCAL_INFERENCE_HANDLER: 'test/support/marker-inference.ts' } as const;

export interface RunningServer {
  baseUrl: string;
  origin: string;
  masterKey: string;
  dataDir: string;
  /** The server process, for measurements of its own (the load benchmark reads its CPU time). */
  pid: number;
  createKey(credits: number, flags?: string[]): Promise<string>;
  /** A new key and its webhook signing secret, as `keys create --json` prints them. */
  createKeyWithSecret(credits: number, flags?: string[]): Promise<{ key: string; webhookSecret: string }>;
  /** `npm run cli -- <args>` against this server's data; the last line of its output, parsed as JSON. */
  cli(args: string[]): Promise<JsonBody>;
  /** What the server printed so far, stdout and stderr together. */
  output(): string;
  /** The job events published so far (the local stand-in of the EventBridge bus). */
  events(): Promise<JsonBody[]>;
  /**
   * Moves the server's clock forward (a server started with `movableClock`): its handlers and its bucket's
   * lifecycle see the time `ms` later from the next request on. Resolves to the server's new time.
   */
  advanceClock(ms: number): Promise<Date>;
  stop(): Promise<void>;
  /**
   * `kill -9` by default: the process dies at once. With SIGTERM or SIGINT (Ctrl-C) it shuts down as it
   * chooses. Either way its data directory stays, for a restart on the same data.
   */
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/** `npm start` as a user runs it: a separate process on a free port with its own data directory. */
export async function startServer(
  env: Record<string, string> = {},
  options: {
    dataDir?: string;
    /** Extra flags for node itself (the load benchmark's `--cpu-prof`). */
    nodeArgs?: string[];
    /** A clock the test moves with `advanceClock` (local/clock.ts), over an IPC channel to the server. */
    movableClock?: boolean;
  } = {},
): Promise<RunningServer> {
  const dataDir = options.dataDir ?? (await mkdtemp(path.join(tmpdir(), 'photo-jobs-it-')));
  const nodeArgs = options.nodeArgs ?? [];
  const masterKey = 'pjm_integration_master_key';
  const childEnv = {
    ...process.env,
    // The app synthesized once for every server of the run (test/support/assembly.ts), not at each start.
    LOCAL_ASSEMBLY_DIR: (await plainAssembly()).dir,
    PORT: '0',
    DATA_DIR: dataDir,
    MASTER_KEY: masterKey,
    SFN_RETRY_INTERVAL_SCALE: '0',
    // Tests never fetch models from the internet: they use ../shared/models or a loopback mirror they name.
    MODELS_OFFLINE: 'true',
    // As in DynamoDB, transactions that overlap on an item are cancelled now and then (docs/aws-parity.md).
    LOCAL_DYNAMODB_TRANSACTION_CONFLICTS: '0.1',
    // As in AWS, unless a test opts in: `npm start` itself opens loopback when it listens there (local/listen.ts).
    OUTBOUND_ALLOW_LOOPBACK: 'false',
    ...(options.movableClock ? { LOCAL_CLOCK: 'ipc' } : {}),
    ...env,
  };
  const child: ChildProcess = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', 'bin/local.ts'], {
    cwd: REPO_ROOT,
    env: childEnv,
    stdio: options.movableClock ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'pipe', 'pipe'],
  });
  // The channel alone must not keep this process alive.
  child.channel?.unref();
  let output = '';
  child.stderr!.on('data', (chunk) => {
    output += chunk;
  });
  const baseUrl = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (chunk) => {
      output += chunk;
      const match = output.match(/API\s+(http:\/\/\S+)/);
      if (match) resolve(match[1]!);
    });
    child.once('exit', (code) => reject(new Error(`server exited with ${code}:\n${output}`)));
  });
  const run = promisify(execFile);
  const cli = async (args: string[]) => {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'bin/cli.ts', ...args], {
      cwd: REPO_ROOT,
      env: childEnv,
    });
    return JSON.parse(stdout.trim().split('\n').pop()!) as JsonBody;
  };
  const createKeyWithSecret = async (credits: number, flags: string[] = []) => {
    // Flags (stored defaults) go through the CLI itself; a plain key is made in this process by the use
    // case the CLI calls, against the server's table: the same record for a fraction of a process start
    // (test/integration/api/cli-keys.test.ts runs the CLI).
    if (flags.length > 0) {
      const created = await cli(['keys', 'create', '--credits', String(credits), '--json', ...flags]);
      return { key: created.key as string, webhookSecret: created.webhook_secret as string };
    }
    const created = await createApiKey({ ...(await serverTable()), clock: systemClock }, { credits });
    return { key: created.key, webhookSecret: created.webhookSecret };
  };
  let table: ReturnType<typeof tableAdapters> | undefined;
  /** The server's table through the AWS adapters, as the CLI opens it (local/data.ts), signed as the admin. */
  const serverTable = async () => {
    if (table) return table;
    const endpoints = await readRunningStack(dataDir);
    if (!endpoints) throw new Error('the local stack published no endpoints');
    const cfg = parseConfig({
      ...childEnv,
      TABLE_NAME: LOCAL_TABLE,
      BUCKET_NAME: LOCAL_BUCKET,
      AWS_REGION: 'us-east-1',
      DYNAMODB_ENDPOINT: endpoints.dynamodb,
      S3_ENDPOINT: endpoints.s3,
    });
    // Signed as the stand-ins' admin, which the server's own environment names for its callers.
    dynamodb = new DynamoDBClient({
      region: 'us-east-1',
      endpoint: endpoints.dynamodb,
      credentials: LOCAL_ADMIN_CREDENTIALS,
    });
    table = tableAdapters(cfg, { dynamodb });
    return table;
  };
  let dynamodb: DynamoDBClient | undefined;
  return {
    baseUrl,
    origin: new URL(baseUrl).origin,
    masterKey,
    dataDir,
    pid: child.pid!,
    async createKey(credits, flags = []) {
      return (await createKeyWithSecret(credits, flags)).key;
    },
    createKeyWithSecret,
    cli,
    output: () => output,
    async events() {
      const text = await readFile(path.join(dataDir, 'events.jsonl'), 'utf8').catch(() => '');
      return text
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as JsonBody);
    },
    advanceClock(ms) {
      if (!child.send) throw new Error('advanceClock needs a server started with movableClock');
      return new Promise<Date>((resolve, reject) => {
        child.once('message', (reply: { clock?: string }) =>
          reply.clock
            ? resolve(new Date(reply.clock))
            : reject(new Error('the server did not move its clock')),
        );
        child.send!({ advanceClockMs: ms }, (error) => error && reject(error));
      });
    },
    async stop() {
      dynamodb?.destroy();
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      await rm(dataDir, { recursive: true, force: true });
      if (process.env.TEST_SERVER_LOG) writeFileSync(process.env.TEST_SERVER_LOG, output);
    },
    async kill(signal: NodeJS.Signals = 'SIGKILL') {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill(signal);
      await exited;
    },
  };
}

// biome-ignore lint/suspicious/noExplicitAny: tests read response bodies field by field and assert on them.
export type JsonBody = Record<string, any>;

export interface ApiResponse {
  status: number;
  body: JsonBody;
}

export function api(server: RunningServer, key?: string) {
  const apiPath = new URL(server.baseUrl).pathname;
  const headers = (extra: Record<string, string> = {}) => ({
    ...(key ? { 'x-api-key': key } : {}),
    ...extra,
  });
  const parse = async (response: Response, method = 'GET'): Promise<ApiResponse> => {
    const body = (await response.json()) as JsonBody;
    expectDocumented(method, new URL(response.url).pathname.slice(apiPath.length), response.status, body);
    return { status: response.status, body };
  };
  return {
    async postForm(route: string, form: FormData, extra?: Record<string, string>) {
      return parse(
        await fetch(`${server.baseUrl}${route}`, { method: 'POST', body: form, headers: headers(extra) }),
        'POST',
      );
    },
    async postJson(route: string, body: unknown, extra?: Record<string, string>) {
      return parse(
        await fetch(`${server.baseUrl}${route}`, {
          method: 'POST',
          body: JSON.stringify(body),
          headers: headers({ 'content-type': 'application/json', ...extra }),
        }),
        'POST',
      );
    },
    async get(route: string, extra?: Record<string, string>) {
      return parse(await fetch(`${server.baseUrl}${route}`, { headers: headers(extra) }));
    },
    /** Poll a job until it stops moving, as the spec tells clients to. */
    waitForJob(jobId: string, timeoutMs = 60_000): Promise<ApiResponse> {
      return eventually(
        () => this.get(`/jobs/${jobId}`),
        (response) => ['success', 'failed', 'cancelled'].includes(response.body.status),
        { timeoutMs, intervalMs: 150 },
      );
    },
  };
}

/** A multipart job request with the given fields and a photo from ../shared/eval as `file`. */
export function evalPhotoForm(file: string, fields: Record<string, string> = {}): FormData {
  return photoForm(readFileSync(path.join(SHARED, 'eval', file)), fields, path.basename(file));
}

/** A multipart job request with the given fields and `photo` (a JPEG) as `file`. */
export function photoForm(
  photo: Buffer,
  fields: Record<string, string> = {},
  filename = 'car.jpg',
): FormData {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  form.append('file', new Blob([photo], { type: 'image/jpeg' }), filename);
  return form;
}

/**
 * A DynamoDB client on the running server's table, outside any invocation: it acts as the local stack's
 * admin identity (local/iam.ts), as a test reading or seeding the data directly must.
 */
export async function adminDynamo(server: RunningServer): Promise<DynamoDBClient> {
  const endpoints = await readRunningStack(server.dataDir);
  if (!endpoints) throw new Error('the local stack published no endpoints');
  return new DynamoDBClient({
    endpoint: endpoints.dynamodb,
    region: 'us-east-1',
    credentials: LOCAL_ADMIN_CREDENTIALS,
  });
}

/**
 * Waits until no workflow execution runs (job or archive): from then on nothing changes a job or a batch
 * and nothing is sent to a webhook unless a request asks, so a test can show that nothing more happens.
 */
export async function untilWorkflowsIdle(server: RunningServer, timeoutMs = 60_000): Promise<void> {
  const endpoints = await readRunningStack(server.dataDir);
  if (!endpoints) throw new Error('the local stack published no endpoints');
  // Express executions are listed by no AWS call: the stand-in is asked directly (local/stepfunctions.ts).
  const running = async () => (await localRunningExecutions(endpoints.sfn)).running;
  const left = await eventually(running, (names) => names.length === 0, { timeoutMs });
  if (left.length > 0) throw new Error(`workflow executions still running: ${left.join(', ')}`);
}

export async function downloadFile(server: RunningServer, url: string): Promise<Buffer> {
  return Buffer.from(await (await fetch(`${server.origin}${url}`)).arrayBuffer());
}

/**
 * GET …/batches/{batch_id}/download as a client does it: while a workflow step builds the archive it
 * answers 202 with `Retry-After`, polled here; then the final answer (the 302 to the archive, or an error).
 */
export function batchDownload(server: RunningServer, key: string, batchId: string, query = '') {
  return eventually(
    async () => {
      const answer = await fetch(`${server.baseUrl}/batches/${batchId}/download${query}`, {
        headers: { 'x-api-key': key },
        redirect: 'manual',
      });
      if (answer.status === 202) {
        if (!(Number(answer.headers.get('retry-after')) > 0)) throw new Error('a 202 without Retry-After');
        await answer.arrayBuffer();
      }
      return answer;
    },
    (answer) => answer.status !== 202,
    { timeoutMs: 75_000, intervalMs: 200 },
  );
}
