/**
 * The OpenAPI document of the API, assembled from every endpoint's contract (./endpoints.ts). Served by
 * get-openapi, written to docs/openapi.json by `npm run openapi`.
 */
import type { OperationSpec } from '#http/openapi/contract.ts';
import { assembleOpenApiDocument, type OpenApiDocument } from '#http/openapi/generator.ts';
import { sharedRequestSchemas, sharedResponseSchemas } from '#http/schemas/shared.ts';
import { ENDPOINTS as BY_FOLDER } from './endpoints.ts';

const ENDPOINTS = Object.values(BY_FOLDER);

/** Every route of the document, keyed `METHOD path` without the `/api/v1` prefix. */
export const ROUTE_CONTRACTS: Record<string, OperationSpec> = Object.assign(
  {},
  ...ENDPOINTS.map((endpoint) => endpoint.operations),
);

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
