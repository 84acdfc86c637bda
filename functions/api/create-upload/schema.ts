/**
 * The contract of POST /uploads: its body and its answer, as the OpenAPI document describes them
 * (registered in layers/http/schemas.ts beside the other endpoints' components).
 */
export { UploadCreated, UploadRequest } from '#http/schemas.ts';
