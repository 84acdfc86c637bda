import { KB, MB } from '../units.ts';

/**
 * What a request may be: its body, URL, headers, form and JSON. Every size a client controls has its limit
 * in this folder (request, image, source bytes, archive), so the gateway, the body parser, the use cases,
 * the OpenAPI document and docs/security.md all quote the same numbers. A limit that is reached is an
 * error whose message names it, never a silent truncation.
 */

/** Lambda's synchronous invocation payload: 6 MB (6,291,456 bytes) for the whole event JSON. */
export const LAMBDA_INVOKE_PAYLOAD_BYTES = 6 * MB;

/**
 * Room kept in that payload for the rest of the event: request context, headers (at most
 * MAX_HEADER_BYTES), cookies, path, query and the JSON around them, with margin for escaping.
 */
export const EVENT_OVERHEAD_BYTES = 64 * KB;

/**
 * The largest request body the service accepts inline: 4,669,440 bytes (about 4.45 MiB).
 * API Gateway's HTTP API takes payloads up to 10 MB, but the Lambda event it builds must fit in 6 MB,
 * and a binary body (multipart uploads) travels in it base64-encoded, 4 bytes for every 3:
 * (6,291,456 − 65,536) × 3 / 4. Larger photos go through `url` (up to MAX_SOURCE_BYTES). A body whose
 * event does not fit never reaches a function: API Gateway answers it, 413 in its own shape.
 */
export const MAX_INLINE_BODY_BYTES = ((LAMBDA_INVOKE_PAYLOAD_BYTES - EVENT_OVERHEAD_BYTES) * 3) / 4;

/**
 * API Gateway's HTTP API payload quota: 10 MB (10,485,760 bytes) of request body. A larger body is refused by
 * API Gateway itself, in its own words, before any route or function sees it. A body under it whose event
 * is over LAMBDA_INVOKE_PAYLOAD_BYTES is refused by Lambda, and API Gateway answers that the same way.
 */
export const API_GATEWAY_PAYLOAD_BYTES = 10 * MB;

/** An HTTP API's longest wait for an integration (its quota; the template may set less, `TimeoutInMillis`). */
export const INTEGRATION_TIMEOUT_SECONDS = 30;

/** The local gateway does not read a body larger than this to the end: 413 at once, and the connection is closed. */
export const MAX_DRAINED_BODY_BYTES = 64 * MB;

/** Path and query together, in bytes as sent (still percent-encoded). */
export const MAX_URL_BYTES = 4096;

/** Request line and headers together, as API Gateway's 10 KB header quota. */
export const MAX_HEADER_BYTES = 10 * KB;

/** A path parameter (job, batch, file or delivery id, result name) longer than this names nothing: 404. */
export const MAX_ID_CHARS = 128;

/** A JSON body carries a few short fields; nothing legitimate comes near this. */
export const MAX_JSON_BODY_BYTES = 64 * KB;

/** Nesting of objects and arrays in a JSON body (the body object itself is depth 1). */
export const MAX_JSON_DEPTH = 8;

/** Text fields of a form (multipart or urlencoded), or members of a JSON body. */
export const MAX_FORM_FIELDS = 32;

/** File parts of a multipart form: `file` and `background_file` on a job, `archive` on a batch. */
export const MAX_FORM_FILES = 2;

/** All parts of a multipart form together. */
export const MAX_FORM_PARTS = MAX_FORM_FIELDS + MAX_FORM_FILES;

/** One text field's value (a URL is at most 2,048 characters; this leaves room for UTF-8). */
export const MAX_FIELD_BYTES = 8 * KB;

/** A field's or file part's name. */
export const MAX_FIELD_NAME_BYTES = 100;

/** Headers of one multipart part (Content-Disposition, Content-Type, ...). */
export const MAX_PART_HEADERS = 16;
