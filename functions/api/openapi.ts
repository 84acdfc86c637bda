/**
 * The OpenAPI document of the API, assembled from every endpoint's contract (its `schema.ts`): a new
 * endpoint adds its line here. Served by get-openapi, written to docs/openapi.json by `npm run openapi`.
 */
import { assembleOpenApiDocument, type OpenApiDocument } from '#http/openapi/generator.ts';
import { sharedRequestSchemas, sharedResponseSchemas } from '#http/schemas.ts';
import { contract as cancelJob } from './cancel-job/schema.ts';
import { contract as controlBatch } from './control-batch/schema.ts';
import { contract as createAsset } from './create-asset/schema.ts';
import { contract as createBatch } from './create-batch/schema.ts';
import { contract as createJob } from './create-job/schema.ts';
import { contract as createUpload } from './create-upload/schema.ts';
import { contract as deleteFile } from './delete-file/schema.ts';
import { contract as downloadBatch } from './download-batch/schema.ts';
import { contract as getBatch } from './get-batch/schema.ts';
import { contract as getJob } from './get-job/schema.ts';
import { contract as getOpenapi } from './get-openapi/schema.ts';
import { contract as getQuota } from './get-quota/schema.ts';
import { contract as getResult } from './get-result/schema.ts';
import { contract as listDeliveries } from './list-deliveries/schema.ts';
import { contract as listFiles } from './list-files/schema.ts';
import { contract as listJobs } from './list-jobs/schema.ts';
import { contract as redeliverWebhook } from './redeliver-webhook/schema.ts';
import { contract as retryJob } from './retry-job/schema.ts';
import { contract as webhookSettings } from './webhook-settings/schema.ts';

export const ENDPOINTS = [
  cancelJob,
  controlBatch,
  createAsset,
  createBatch,
  createJob,
  createUpload,
  deleteFile,
  downloadBatch,
  getBatch,
  getJob,
  getOpenapi,
  getQuota,
  getResult,
  listDeliveries,
  listFiles,
  listJobs,
  redeliverWebhook,
  retryJob,
  webhookSettings,
] as const;

/** Every route of the document, keyed `METHOD path` without the `/api/v1` prefix. */
export const ROUTE_CONTRACTS = Object.assign(
  {},
  ...ENDPOINTS.map((endpoint) => endpoint.operations),
) as Record<string, (typeof ENDPOINTS)[number]['operations'][string]>;

type Endpoint = (typeof ENDPOINTS)[number];
type Intersection<U> = (U extends unknown ? (part: U) => void : never) extends (all: infer I) => void
  ? I
  : never;

/** Every request body component, shared or of one endpoint (the client's and the tests' lookup). */
export const requestSchemas = Object.assign(
  {},
  sharedRequestSchemas,
  ...ENDPOINTS.map((endpoint) => endpoint.requestSchemas),
) as typeof sharedRequestSchemas & Intersection<Endpoint['requestSchemas']>;

/** Every response body component, shared or of one endpoint. */
export const responseSchemas = Object.assign(
  {},
  sharedResponseSchemas,
  ...ENDPOINTS.map((endpoint) => endpoint.responseSchemas),
) as typeof sharedResponseSchemas & Intersection<Endpoint['responseSchemas']>;

export const buildOpenApiDocument = (): OpenApiDocument => assembleOpenApiDocument(ENDPOINTS);
