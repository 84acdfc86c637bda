import { readFileSync } from 'node:fs';
import { compileErrors, validate } from '@readme/openapi-parser';
import { describe, expect, it, vi } from 'vitest';
import { API_PREFIX } from '#core/jobs/envelope.ts';
import { jobInputSchema } from '#core/jobs/input.ts';
import { BOOLEAN_SPELLINGS } from '#core/jobs/params.ts';
import type { HttpContext, HttpEvent } from '#http/http-stack.ts';
import { serializeOpenApi } from '#http/openapi/generator.ts';
import type { HttpResult } from '#http/responses.ts';
import { buildOpenApiDocument } from '../../../functions/api/openapi.ts';
import { routes } from '../../../lib/config.ts';

// biome-ignore lint/suspicious/noExplicitAny: the test walks untyped JSON
type Json = Record<string, any>;

const document = buildOpenApiDocument();
const COMMITTED = new URL('../../../docs/openapi.json', import.meta.url);
const METHODS = ['get', 'put', 'post', 'patch', 'delete', 'head', 'options', 'trace'];

function resolvePointer(root: Json, ref: string): unknown {
  if (!ref.startsWith('#/')) return undefined;
  let node: unknown = root;
  for (const raw of ref.slice(2).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (node === null || typeof node !== 'object' || !(key in node)) return undefined;
    node = (node as Json)[key];
  }
  return node;
}

const deref = (root: Json, node: Json): Json =>
  node.$ref ? (resolvePointer(root, node.$ref) as Json) : node;

/**
 * The structural rules of OpenAPI 3.1 this document relies on, beyond the validator's checks:
 * it lists what it finds wrong rather than stopping at the first problem.
 */
function structuralProblems(doc: Json): string[] {
  const problems: string[] = [];
  if (!/^3\.1\.\d+$/.test(doc.openapi)) problems.push(`openapi is ${doc.openapi}, not 3.1.x`);
  if (typeof doc.info?.title !== 'string' || typeof doc.info?.version !== 'string') {
    problems.push('info needs a title and a version');
  }

  const walk = (node: unknown, where: string) => {
    if (Array.isArray(node)) {
      for (const [i, item] of node.entries()) walk(item, `${where}/${i}`);
    } else if (node && typeof node === 'object') {
      for (const [key, value] of Object.entries(node)) {
        if (key === '$ref' && (typeof value !== 'string' || resolvePointer(doc, value) === undefined)) {
          problems.push(`${where}: $ref ${String(value)} does not resolve`);
        }
        walk(value, `${where}/${key}`);
      }
    }
  };
  walk(doc, '#');

  const schemes = Object.keys(doc.components?.securitySchemes ?? {});
  const operationIds = new Map<string, string>();
  const checkOperation = (where: string, operation: Json, pathParams: Json[], template: string | null) => {
    const id = operation.operationId;
    if (typeof id !== 'string' || id === '') problems.push(`${where}: no operationId`);
    else if (operationIds.has(id))
      problems.push(`${where}: operationId ${id} also used by ${operationIds.get(id)}`);
    else operationIds.set(id, where);

    const responses = Object.entries(operation.responses ?? {});
    if (responses.length === 0) problems.push(`${where}: no responses`);
    for (const [status, response] of responses) {
      if (!/^([1-5]\d\d|[1-5]XX|default)$/.test(status)) problems.push(`${where}: response key ${status}`);
      if (typeof deref(doc, response as Json)?.description !== 'string') {
        problems.push(`${where} ${status}: response without a description`);
      }
    }

    const parameters = [...pathParams, ...(operation.parameters ?? [])].map((p: Json) => deref(doc, p));
    for (const parameter of parameters) {
      if (!parameter?.name || !['query', 'header', 'path', 'cookie'].includes(parameter.in)) {
        problems.push(`${where}: malformed parameter ${JSON.stringify(parameter)}`);
      } else if (!parameter.schema && !parameter.content) {
        problems.push(`${where}: parameter ${parameter.name} has neither schema nor content`);
      }
    }
    const seen = new Set<string>();
    for (const parameter of parameters) {
      const key = `${parameter.in}:${parameter.name}`;
      if (seen.has(key)) problems.push(`${where}: parameter ${key} declared twice`);
      seen.add(key);
    }
    if (template !== null) {
      const inTemplate = [...template.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]);
      const declared = parameters.filter((p) => p.in === 'path');
      for (const name of inTemplate) {
        const parameter = declared.find((p) => p.name === name);
        if (!parameter) problems.push(`${where}: path parameter {${name}} is not declared`);
        else if (parameter.required !== true)
          problems.push(`${where}: path parameter {${name}} is not required`);
      }
      for (const parameter of declared) {
        if (!inTemplate.includes(parameter.name))
          problems.push(`${where}: ${parameter.name} is not in the path`);
      }
    }

    if (operation.requestBody && Object.keys(deref(doc, operation.requestBody).content ?? {}).length === 0) {
      problems.push(`${where}: request body without content`);
    }
    for (const requirement of operation.security ?? []) {
      for (const scheme of Object.keys(requirement)) {
        if (!schemes.includes(scheme)) problems.push(`${where}: unknown security scheme ${scheme}`);
      }
    }
  };

  for (const [path, item] of Object.entries<Json>(doc.paths ?? {})) {
    if (!path.startsWith('/')) problems.push(`path ${path} does not start with /`);
    const operations = Object.entries(item).filter(([key]) => METHODS.includes(key));
    if (operations.length === 0) problems.push(`${path}: no operations`);
    for (const [method, operation] of operations) {
      checkOperation(`${method.toUpperCase()} ${path}`, operation as Json, item.parameters ?? [], path);
    }
  }
  for (const [name, item] of Object.entries<Json>(doc.webhooks ?? {})) {
    for (const [method, operation] of Object.entries(item).filter(([key]) => METHODS.includes(key))) {
      checkOperation(`webhook ${name} ${method}`, operation as Json, [], null);
    }
  }
  return problems;
}

describe('OpenAPI document', () => {
  it('is what docs/openapi.json holds (run `npm run openapi` after changing a schema or route)', () => {
    const committed = readFileSync(COMMITTED, 'utf8');
    expect(committed, 'docs/openapi.json is stale: run `npm run openapi` and commit the result').toBe(
      serializeOpenApi(document),
    );
  });

  it('is deterministic', () => {
    expect(serializeOpenApi(buildOpenApiDocument())).toBe(serializeOpenApi(document));
  });

  it('is structurally valid OpenAPI 3.1', () => {
    expect(structuralProblems(document)).toEqual([]);
  });

  it('passes a full OpenAPI 3.1 validator (@readme/openapi-parser: schema and spec rules)', async () => {
    const result = await validate(structuredClone(document) as Parameters<typeof validate>[0]);
    expect(result.valid ? '' : compileErrors(result)).toBe('');
  });

  it('is checked by a validator that refuses a broken document', async () => {
    const broken = structuredClone(document) as Json;
    broken.paths['/jobs'].post.responses['202'].content['application/json'].schema = {
      $ref: '#/components/schemas/NoSuchSchema',
    };
    delete broken.info.title;
    const result = await validate(broken as Parameters<typeof validate>[0]);
    expect(result.valid).toBe(false);
  });

  it('finds the problems it is meant to find', () => {
    const broken = structuredClone(document) as Json;
    broken.paths['/jobs/{job_id}'].parameters = [];
    broken.paths['/jobs'].get.responses.$bogus = { $ref: '#/components/responses/Nope' };
    broken.paths['/quota'].get.operationId = 'createJob';
    broken.paths['/webhook'].delete.responses = {};
    const problems = structuralProblems(broken).join('\n');
    expect(problems).toMatch(/GET \/jobs\/\{job_id\}: path parameter \{job_id\} is not declared/);
    expect(problems).toMatch(/\$ref #\/components\/responses\/Nope does not resolve/);
    expect(problems).toMatch(/operationId createJob also used/);
    expect(problems).toMatch(/DELETE \/webhook: no responses/);
  });

  it('has version 1.1.0 and paths relative to /api/v1', () => {
    expect(document.info).toMatchObject({ version: '1.1.0' });
    expect(document.servers).toEqual([expect.objectContaining({ url: API_PREFIX })]);
    expect(Object.keys(document.paths).filter((path) => path.startsWith(API_PREFIX))).toEqual([]);
  });

  it('documents every route of the route table with its method, and no other', () => {
    const expected = routes.map((route) => `${route.method} ${route.path.slice(API_PREFIX.length)}`).sort();
    const documented = Object.entries(document.paths)
      .flatMap(([path, item]) =>
        Object.keys(item)
          .filter((key) => METHODS.includes(key))
          .map((method) => `${method.toUpperCase()} ${path}`),
      )
      .sort();
    expect(documented).toEqual(expected);
  });

  it('uses $ref to a component for every body', () => {
    const schemas = Object.keys((document.components as Json).schemas);
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(item as Record<string, Json>)) {
        if (!METHODS.includes(method)) continue;
        const bodies = [
          ...Object.values<Json>(operation.requestBody?.content ?? {}),
          ...Object.values<Json>(operation.responses).flatMap((r) => Object.values<Json>(r.content ?? {})),
        ];
        for (const body of bodies) {
          expect(body.schema.$ref, `${method} ${path}`).toMatch(/^#\/components\/schemas\//);
          expect(schemas).toContain(body.schema.$ref.split('/').pop());
        }
      }
    }
  });

  it('gives every error status of spec section 7 the one error body, and API Gateway’s own where it answers', () => {
    const responses = (document.components as Json).responses as Json;
    const createJob = document.paths['/jobs']!.post as Json;
    const statuses = ['400', '401', '402', '404', '409', '410', '413', '415', '422', '429', '500'];
    const errorBody = { $ref: '#/components/schemas/ErrorBody' };
    for (const status of statuses) {
      const response = deref(document, createJob.responses[status]);
      // A body too large and a failed function are answered by API Gateway itself, in its shape.
      expect(response.content['application/json'].schema).toEqual(
        ['413', '500'].includes(status)
          ? { anyOf: [errorBody, { $ref: '#/components/schemas/ApiGatewayError' }] }
          : errorBody,
      );
      expect(response.description.length, status).toBeGreaterThan(20);
    }
    expect(Object.keys(responses)).toHaveLength(statuses.length);
    expect(deref(document, createJob.responses['413']).description).toMatch(/4,669,440 bytes.*6 MB.*20 MB/s);
  });

  it('documents the job input as in spec 2.1', () => {
    const input = (document.components as Json).schemas.JobInput;
    expect(input.properties.mode).toMatchObject({
      default: 'plate',
      enum: ['plate', 'background', 'studio_background', 'plate_mask', 'background_mask', 'analyze'],
    });
    const colour = input.properties.plate_color;
    expect(colour.anyOf).toContainEqual({ type: 'string', pattern: '^#[0-9a-fA-F]{6}$' });
    expect(colour.description).toMatch(/black.*#000000.*white.*#ffffff.*graphite.*#141414/);
    expect(input.properties.plate_smoothing.default).toBe(true);
    expect(input.properties.plate_mask_only.default).toBe(false);
    for (const field of ['plate_smoothing', 'plate_mask_only']) {
      const spellings = input.properties[field].anyOf.find((branch: Json) => branch.type === 'string').enum;
      expect(spellings).toEqual(expect.arrayContaining(['true', 'false', '1', '0', 'smooth', 'raw']));
    }
    expect(input.required ?? []).toEqual([]);
    const form = (document.components as Json).schemas.JobInputForm;
    expect(form.properties.file).toMatchObject({ type: 'string', format: 'binary' });
    expect(form.properties.background_file).toMatchObject({ type: 'string', format: 'binary' });
  });

  it('documents only values that jobInputSchema accepts, and all its fields', () => {
    const input = (document.components as Json).schemas.JobInput;
    expect(Object.keys(input.properties).sort()).toEqual(Object.keys(jobInputSchema().shape).sort());
    for (const spelling of [...BOOLEAN_SPELLINGS, 'SMOOTH', true, false, 0, 1]) {
      expect(jobInputSchema().safeParse({ plate_smoothing: spelling }).success, String(spelling)).toBe(true);
    }
    for (const colour of ['#A1b2C3', 'black', 'white', 'graphite']) {
      expect(jobInputSchema().safeParse({ plate_color: colour }).success, colour).toBe(true);
    }
  });

  it('takes an Idempotency-Key of at most 200 characters on the creating routes', () => {
    const parameter = deref(document, { $ref: '#/components/parameters/IdempotencyKey' });
    expect(parameter).toMatchObject({ name: 'Idempotency-Key', in: 'header', schema: { maxLength: 200 } });
    for (const path of ['/jobs', '/process', '/analyze']) {
      expect((document.paths[path]!.post as Json).parameters).toContainEqual({
        $ref: '#/components/parameters/IdempotencyKey',
      });
    }
  });

  it('documents the job list query of the spec', () => {
    const parameters = (document.paths['/jobs']!.get as Json).parameters as Json[];
    const byName = Object.fromEntries(parameters.map((p) => [p.name, p]));
    expect(byName.limit.schema).toMatchObject({ type: 'integer', minimum: 1, maximum: 100, default: 25 });
    expect(byName.before.schema).toMatchObject({ type: 'integer', format: 'int64' });
    expect(byName.status.schema.enum).toEqual([
      'queued',
      'processing',
      'paused',
      'success',
      'failed',
      'cancelled',
    ]);
  });

  it('states the interface decisions of docs/decisions/0001 and 0002', () => {
    const schemas = (document.components as Json).schemas;
    expect(schemas.JobEnvelope.description).toMatch(/flat object/);
    expect(schemas.JobEnvelope.properties.result.description).toMatch(/failed or was cancelled/);
    expect(schemas.JobEnvelope.properties.code.description).toMatch(/202.*200.*409/);
    expect(schemas.JobStage.enum).toEqual(['queued', 'preparing', 'done']);
    expect(Object.keys(schemas.JobLinks.properties)).toEqual(['self', 'cancel', 'retry', 'result']);
    expect(schemas.JobOutput.properties.url.description).toMatch(/302.*15 minutes.*30 days/);
    expect(document.paths['/results/{job_id}/{name}']!.get).toMatchObject({ security: [] });
  });

  it('asks for an account key on /assets and /batches and lets guests create jobs', () => {
    const schemes = (document.components as Json).securitySchemes;
    expect(schemes.ApiKeyHeader).toMatchObject({ type: 'apiKey', in: 'header', name: 'X-API-Key' });
    expect(schemes.Bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(schemes.GuestSession).toMatchObject({ type: 'apiKey', in: 'cookie', name: 'pj_guest' });
    const keyOnly = [{ ApiKeyHeader: [] }, { Bearer: [] }];
    expect((document.paths['/assets']!.post as Json).security).toEqual(keyOnly);
    expect((document.paths['/batches']!.post as Json).security).toEqual(keyOnly);
    expect((document.paths['/jobs']!.post as Json).security).toContainEqual({ GuestSession: [] });
  });
});

describe('GET /api/v1/openapi.json', () => {
  it('answers the document without a key', async () => {
    vi.stubEnv('TABLE_NAME', 'unit-table');
    vi.stubEnv('BUCKET_NAME', 'unit-bucket');
    const { handler } = await import('../../../functions/api/get-openapi/handler.ts');
    const event = {
      routeKey: 'GET /api/v1/openapi.json',
      rawPath: '/api/v1/openapi.json',
      headers: {},
      requestContext: { http: { method: 'GET', path: '/api/v1/openapi.json', sourceIp: '127.0.0.1' } },
      isBase64Encoded: false,
    } as unknown as HttpEvent;
    const first = (await handler(event, {} as HttpContext)) as HttpResult;
    const second = (await handler(event, {} as HttpContext)) as HttpResult;
    expect(first.statusCode).toBe(200);
    expect(JSON.parse(first.body!)).toEqual(JSON.parse(serializeOpenApi(document)));
    expect(second.body).toBe(first.body);
    vi.unstubAllEnvs();
  });
});
