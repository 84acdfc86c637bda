import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { builtinModules } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { errorNames } from '#core/error-names.ts';
import { bundleInference, inferenceExternals } from '../../functions/inference/bundle.ts';
import { repoRoot, routes, workflowHandlers } from '../../lib/config.ts';
import { startLocalDynamo } from '../../local/dynamodb.ts';
import { startLocalS3 } from '../../local/s3.ts';
import { type LocalFunction, readTopology } from '../../local/template.ts';
import { bundledAssembly } from '../support/assembly.ts';

/**
 * What is deployed is what is tested: the zip functions exactly as `cdk deploy` bundles them, and the
 * inference handler as its image bundles it, loaded and run here against the local stand-ins.
 */
type Handler = (event: unknown, context: Context) => Promise<unknown>;

/**
 * Bare specifiers a bundle may name for the runtime: the SDK loads the CRT signer in a try/catch, and its
 * error message for SigV4a shows `require('@aws-sdk/signature-v4a')` to whoever needs it.
 */
const OPTIONAL_AT_RUN_TIME = new Set(['@aws-sdk/signature-v4-crt', '@aws-sdk/signature-v4a']);
const packageJson = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
};

const run = promisify(execFile);
let bundleDir = '';
let functions: LocalFunction[] = [];
const stopStandIns: Array<() => Promise<void>> = [];
const modules = new Map<string, { file: string; handler: Handler }>();

const context = (name: string) =>
  ({ functionName: name, awsRequestId: 'test', getRemainingTimeInMillis: () => 30_000 }) as Context;

beforeAll(async () => {
  await mkdir(join(repoRoot, '.cache'), { recursive: true });
  // Under the repository, as the image puts node_modules next to its bundle.
  bundleDir = await mkdtemp(join(repoRoot, '.cache', 'bundled-test-'));
  // The assembly `cdk deploy` would build, shared with the package tests (test/support/assembly.ts).
  const { dir: outdir, templates } = await bundledAssembly();
  const topology = readTopology([templates.data, templates.service], () => 'bundles-test');
  functions = [...topology.functions.values()];

  const dynamo = await startLocalDynamo({ tables: topology.tables });
  const s3 = await startLocalS3({ buckets: ['bundles-test'] });
  stopStandIns.push(dynamo.close, s3.close);
  Object.assign(process.env, {
    TABLE_NAME: 'bundles-test',
    BUCKET_NAME: 'bundles-test',
    AWS_REGION: 'us-east-1',
    // The stand-ins' keys, from the environment as Lambda gives a role's.
    AWS_ACCESS_KEY_ID: 'S3RVER',
    AWS_SECRET_ACCESS_KEY: 'S3RVER',
    DYNAMODB_ENDPOINT: dynamo.endpoint,
    S3_ENDPOINT: s3.endpoint,
    STATE_MACHINE_ARN: 'arn:aws:states:us-east-1:000000000000:stateMachine:bundles-test',
  });
  const s3Client = new S3Client({
    region: 'us-east-1',
    endpoint: s3.endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
  });
  await s3Client.send(
    new PutObjectCommand({ Bucket: 'bundles-test', Key: 'sources/not-a-photo.jpg', Body: 'not a photo' }),
  );

  for (const fn of functions) {
    const file = fn.image
      ? await bundleInference(join(bundleDir, 'inference.mjs'))
      : join(outdir, `asset.${fn.assetHash}`, 'index.mjs');
    const module = (await import(pathToFileURL(file).href)) as { handler: Handler };
    modules.set(fn.handler, { file, handler: module.handler });
  }
}, 600_000);

afterAll(async () => {
  for (const stop of stopStandIns) await stop();
  await rm(bundleDir, { recursive: true, force: true });
});

const bundled = (handler: string) => {
  const module = modules.get(handler);
  if (!module) throw new Error(`no bundle for ${handler}`);
  return module;
};

const bareSpecifiers = (code: string): string[] => {
  const found = new Set<string>();
  // esbuild writes double quotes, Rollup (lib/constructs/one-file-at-init.ts) single ones.
  for (const match of code.matchAll(/(?:require\(|from\s*|import\()\s*(["'])([^"'./][^"']*)\1/g)) {
    const name = match[2]!;
    if (!name.startsWith('node:') && !builtinModules.includes(name.split('/')[0]!)) found.add(name);
  }
  return [...found].sort();
};

describe('bundled functions', () => {
  it('exist for every function of the template, zip assets and the inference image alike', () => {
    expect(functions.filter((fn) => fn.image)).toHaveLength(1);
    for (const fn of functions) {
      expect(typeof bundled(fn.handler).handler, fn.handler).toBe('function');
      if (!fn.image) expect(fn.assetHash, fn.handler).toMatch(/^[0-9a-f]{64}$/);
    }
    // Each its own: CDK reuses one bundle for bundling options it finds equal.
    const zips = functions.filter((fn) => !fn.image);
    expect(new Set(zips.map((fn) => fn.assetHash)).size).toBe(new Set(zips.map((fn) => fn.handler)).size);
  });

  it('read one file at init: a zip’s index.mjs imports no chunk but through import()', () => {
    const zips = functions.filter((fn) => !fn.image);
    for (const fn of zips) {
      const code = readFileSync(bundled(fn.handler).file, 'utf8');
      const staticImports = [
        ...code.matchAll(/(?:^|[;}\s])import\s*(?:[^'"();]*?from\s*)?(["'])(\.[^"']*)\1/g),
      ];
      expect(
        staticImports.map((match) => match[2]),
        fn.handler,
      ).toEqual([]);
    }
    // The lazy chunks are still there: an API function imports its bucket adapter on first use.
    const getJob = functions.find((fn) => fn.handler === 'functions/api/get-job/handler.ts')!;
    expect(readFileSync(bundled(getJob.handler).file, 'utf8')).toMatch(/import\(\s*['"]\.\/chunks\//);
  });

  it('leave nothing to resolve at run time in a zip, and only production dependencies in the image', () => {
    for (const fn of functions) {
      const left = bareSpecifiers(readFileSync(bundled(fn.handler).file, 'utf8')).filter(
        (name) => !OPTIONAL_AT_RUN_TIME.has(name),
      );
      if (!fn.image) {
        expect(left, fn.handler).toEqual([]);
        continue;
      }
      expect(left).toEqual([...inferenceExternals].sort());
      // The image installs `npm ci --omit=dev` next to its bundle.
      for (const name of left) expect(Object.keys(packageJson.dependencies)).toContain(name);
    }
  });

  it('open neither stdout nor stderr at init but for Powertools’ metrics, which most of their calls print', async () => {
    // A fresh process, as Lambda's: reading process.stdout or process.stderr opens the stream, and once open
    // it stays so (layers/node-process.cjs, layers/aws/observability.ts). The functions that record a
    // metric (create-job, settle-job, the webhook's) construct Powertools' Metrics, and its Console, at import.
    const probe = `
      import { writeSync } from 'node:fs';
      const opened = [];
      for (const name of ['stdout', 'stderr']) {
        const { get } = Object.getOwnPropertyDescriptor(process, name);
        Object.defineProperty(process, name, { configurable: true, get() {
          opened.push(name + ' ' + new Error().stack.split('\\n').slice(2, 4).join(' ').replace(/\\s+/g, ' '));
          return get.call(this);
        } });
      }
      for (const file of JSON.parse(process.argv[1])) await import(file);
      writeSync(1, JSON.stringify(opened));`;
    const files = functions
      .filter((fn) => !fn.image)
      .map((fn) => pathToFileURL(bundled(fn.handler).file).href);
    const { stdout } = await run(
      process.execPath,
      ['--input-type=module', '-e', probe, JSON.stringify(files)],
      {
        env: process.env,
      },
    );
    const opened = JSON.parse(stdout) as string[];
    expect(opened.filter((by) => !/ at new Metrics /.test(by))).toEqual([]);
  });

  it('answer an API request: every API bundle runs its middleware and answers in the spec’s shape', async () => {
    const apiRoutes = new Map(routes.map((route) => [route.handler, route]));
    for (const [handler, route] of apiRoutes) {
      const event: APIGatewayProxyEventV2 = {
        version: '2.0',
        routeKey: `${route.method} ${route.path}`,
        rawPath: route.path,
        rawQueryString: '',
        headers: { host: 'localhost' },
        isBase64Encoded: false,
        requestContext: {
          accountId: '000000000000',
          apiId: 'bundles',
          domainName: 'localhost',
          domainPrefix: 'localhost',
          http: {
            method: route.method,
            path: route.path,
            protocol: 'HTTP/1.1',
            sourceIp: '127.0.0.1',
            userAgent: '',
          },
          requestId: 'bundles',
          routeKey: `${route.method} ${route.path}`,
          stage: '$default',
          time: new Date().toUTCString(),
          timeEpoch: Date.now(),
        },
      };
      const response = (await bundled(handler).handler(event, context(handler))) as {
        statusCode: number;
        body?: string;
      };
      expect(response.statusCode, handler).toBeLessThan(500);
      if (response.statusCode >= 400) {
        expect(JSON.parse(response.body ?? '{}'), handler).toMatchObject({ result: false });
      }
    }
  });

  it('throw workflow errors under their own names, which the state machine matches', async () => {
    const missing = 'job_000000000000000000000000';
    const written: string[] = [];
    const capture = (chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    };
    const stdout = vi.spyOn(process.stdout, 'write').mockImplementation(capture);
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(capture);
    try {
      await expect(
        bundled(workflowHandlers.prepareJob).handler({ jobId: missing }, context('prepare')),
      ).rejects.toMatchObject({ name: errorNames.NotFoundError });
    } finally {
      stdout.mockRestore();
      stderr.mockRestore();
    }
    // The bundled Powertools logger writes one JSON line with the job's id and the error's own name; a
    // missing job is an outcome the service answers (404), so a WARN without a stack, not an ERROR.
    const logged = written
      .flatMap((text) => text.split('\n'))
      .filter((line) => line.includes('job outcome') || line.includes('invocation failed'));
    expect(logged.map((line) => JSON.parse(line))).toEqual([
      expect.objectContaining({
        level: 'WARN',
        message: 'job outcome',
        service: 'photo-jobs',
        job_id: missing,
        code: 404,
        reason: expect.stringMatching(new RegExp(`^${errorNames.NotFoundError}: `)),
      }),
    ]);
    await expect(
      bundled(workflowHandlers.settleJob).handler(
        { jobId: missing, outcome: 'failure', failure: { Error: 'States.Timeout' } },
        context('settle'),
      ),
    ).rejects.toMatchObject({ name: errorNames.NotFoundError });
  });

  it('name the inference failure of an undecodable photo so that settlement keeps its code', async () => {
    const [inference] = functions.filter((fn) => fn.image);
    const order = {
      jobId: 'job_000000000000000000000001',
      operation: 'plate',
      source: { key: 'sources/not-a-photo.jpg', contentType: 'image/jpeg', sha256: '0'.repeat(64) },
      params: {},
      resultPrefix: 'results/job_000000000000000000000001/',
    };
    const failure = await bundled(inference!.handler)
      .handler(order, context('inference'))
      .then(
        () => null,
        (error: Error) => error,
      );
    expect(failure?.name).toMatch(/^(SourceImageError|UnsupportedMediaTypeError|ModelUnavailableError)$/);
  });
});
