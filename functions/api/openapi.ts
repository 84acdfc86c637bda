/**
 * The OpenAPI document of the API, assembled from every endpoint's contract (./endpoints.ts). Served by
 * get-openapi, written to docs/openapi.json by `npm run openapi`.
 */
import type { OperationSpec } from '#http/openapi/contract.ts';
import { assembleOpenApiDocument, type OpenApiDocument } from '#http/openapi/generator.ts';
import { sharedRequestSchemas, sharedResponseSchemas } from '#http/schemas/shared.ts';
import { document as createAsset } from './create-asset/document.ts';
import { document as createBatch } from './create-batch/document.ts';
import { document as createJob } from './create-job/document.ts';
import { document as createUpload } from './create-upload/document.ts';
import { document as deleteFile } from './delete-file/document.ts';
import { document as downloadBatch } from './download-batch/document.ts';
import { ENDPOINTS as BY_FOLDER } from './endpoints.ts';
import { document as getOpenapi } from './get-openapi/document.ts';
import { document as getQuota } from './get-quota/document.ts';
import { document as listDeliveries } from './list-deliveries/document.ts';
import { document as listFiles } from './list-files/document.ts';
import { document as listJobs } from './list-jobs/document.ts';
import { document as webhookSettings } from './webhook-settings/document.ts';

const ENDPOINTS = Object.values(BY_FOLDER);

/**
 * The schema components of the endpoints that define their own, each in its folder's document.ts: apart
 * from the contracts, which handlers import, so that no handler builds them (layers/http/openapi/contract.ts).
 */
const DOCUMENTS = [
  createAsset,
  createBatch,
  createJob,
  createUpload,
  deleteFile,
  downloadBatch,
  getOpenapi,
  getQuota,
  listDeliveries,
  listFiles,
  listJobs,
  webhookSettings,
];

/** Every route of the document, keyed `METHOD path` without the `/api/v1` prefix. */
export const ROUTE_CONTRACTS: Record<string, OperationSpec> = Object.assign(
  {},
  ...ENDPOINTS.map((endpoint) => endpoint.operations),
);

type EndpointDocument = (typeof DOCUMENTS)[number];
type Intersection<U> = (U extends unknown ? (part: U) => void : never) extends (all: infer I) => void
  ? I
  : never;

/** Every request body component, shared or of one endpoint (the client's and the tests' lookup). */
export const requestSchemas = Object.assign(
  {},
  sharedRequestSchemas,
  ...DOCUMENTS.map((document) => document.requestSchemas),
) as typeof sharedRequestSchemas & Intersection<EndpointDocument['requestSchemas']>;

/** Every response body component, shared or of one endpoint. */
export const responseSchemas = Object.assign(
  {},
  sharedResponseSchemas,
  ...DOCUMENTS.map((document) => document.responseSchemas),
) as typeof sharedResponseSchemas & Intersection<EndpointDocument['responseSchemas']>;

export const buildOpenApiDocument = (): OpenApiDocument => assembleOpenApiDocument(ENDPOINTS, DOCUMENTS);
