import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import type busboy from 'busboy';
import { BadRequestError, PayloadTooLargeError, UnsupportedMediaTypeError } from '#core/errors.ts';
import type { UploadedFile } from '#core/jobs/input.ts';
import {
  MAX_FIELD_BYTES,
  MAX_FIELD_NAME_BYTES,
  MAX_FORM_FIELDS,
  MAX_FORM_FILES,
  MAX_FORM_PARTS,
  MAX_JSON_BODY_BYTES,
  MAX_JSON_DEPTH,
  MAX_PART_HEADERS,
} from '#core/limits/request.ts';

export interface ParsedBody {
  fields: Record<string, unknown>;
  files: Record<string, UploadedFile>;
}

export const header = (event: APIGatewayProxyEventV2, name: string): string | undefined =>
  event.headers?.[name.toLowerCase()];

function rawBody(event: APIGatewayProxyEventV2): Buffer {
  if (!event.body) return Buffer.alloc(0);
  return Buffer.from(event.body, event.isBase64Encoded ? 'base64' : 'utf8');
}

const n = (value: number) => value.toLocaleString('en-US');

/**
 * JSON, multipart/form-data and urlencoded forms all land in the same shape, so routes validate one way.
 * Every limit reached is an error naming it; a field sent twice is an error too (which one counts would
 * be a guess that could change the operation or its price).
 */
export async function parseBody(event: APIGatewayProxyEventV2, maxFileBytes: number): Promise<ParsedBody> {
  const contentType = header(event, 'content-type') ?? '';
  const body = rawBody(event);
  if (body.length === 0) return { fields: {}, files: {} };
  if (/^application\/(.+\+)?json/i.test(contentType)) return { fields: parseJson(body), files: {} };
  if (/^application\/x-www-form-urlencoded/i.test(contentType)) {
    return { fields: parseUrlencoded(body), files: {} };
  }
  if (/^multipart\/form-data/i.test(contentType)) return parseMultipart(contentType, body, maxFileBytes);
  throw new UnsupportedMediaTypeError('Send application/json, multipart/form-data or a urlencoded form');
}

function parseJson(body: Buffer): Record<string, unknown> {
  if (body.length > MAX_JSON_BODY_BYTES) {
    throw new PayloadTooLargeError(
      `The JSON body is larger than ${n(MAX_JSON_BODY_BYTES)} bytes (limit: JSON body)`,
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    throw new BadRequestError('The body is not valid JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new BadRequestError('The JSON body must be an object');
  }
  if (depthOf(parsed) > MAX_JSON_DEPTH) {
    throw new BadRequestError(
      `The JSON body is nested deeper than ${MAX_JSON_DEPTH} levels (limit: JSON depth)`,
    );
  }
  const fields = parsed as Record<string, unknown>;
  checkFieldCount(Object.keys(fields).length);
  return fields;
}

/** Depth without recursion, so a hostile body cannot exhaust the stack here either. */
function depthOf(value: object): number {
  let deepest = 0;
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop()!;
    if (typeof item !== 'object' || item === null) continue;
    deepest = Math.max(deepest, depth);
    if (deepest > MAX_JSON_DEPTH) return deepest;
    for (const child of Object.values(item)) stack.push([child, depth + 1]);
  }
  return deepest;
}

function parseUrlencoded(body: Buffer): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  let count = 0;
  for (const [name, value] of new URLSearchParams(body.toString('utf8'))) {
    checkFieldCount(++count);
    addField(fields, name, value);
  }
  return fields;
}

function checkFieldCount(count: number) {
  if (count > MAX_FORM_FIELDS) {
    throw new PayloadTooLargeError(`The body has more than ${MAX_FORM_FIELDS} fields (limit: form fields)`);
  }
}

function addField(fields: Record<string, unknown>, name: string | undefined, value: string) {
  if (!name) throw new BadRequestError('A form field has no name');
  if (Buffer.byteLength(name) > MAX_FIELD_NAME_BYTES) {
    throw new PayloadTooLargeError(
      `A field name is longer than ${MAX_FIELD_NAME_BYTES} bytes (limit: field name size)`,
    );
  }
  if (Buffer.byteLength(value) > MAX_FIELD_BYTES) {
    throw new PayloadTooLargeError(`${name} is longer than ${n(MAX_FIELD_BYTES)} bytes (limit: field size)`);
  }
  if (Object.hasOwn(fields, name)) throw new BadRequestError(`${name} is sent more than once`);
  fields[name] = value;
}

async function parseMultipart(contentType: string, body: Buffer, maxFileBytes: number): Promise<ParsedBody> {
  // Only the endpoints that take files ever parse a form: the others never load busboy.
  const { default: busboy } = await import('busboy');
  return new Promise((resolve, reject) => {
    const fields: Record<string, unknown> = {};
    const files: Record<string, UploadedFile> = {};
    const fileNames = new Set<string>();
    let failed = false;
    const fail = (error: Error) => {
      if (failed) return;
      failed = true;
      reject(error);
    };
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: { 'content-type': contentType },
        // File names in any language: RFC 7578 sends them as UTF-8, busboy's default is latin1.
        defParamCharset: 'utf8',
        limits: {
          fileSize: maxFileBytes,
          files: MAX_FORM_FILES,
          fields: MAX_FORM_FIELDS,
          parts: MAX_FORM_PARTS,
          // One byte more than allowed, so that "exactly at the limit" and "over it" can be told apart.
          fieldSize: MAX_FIELD_BYTES + 1,
          fieldNameSize: MAX_FIELD_NAME_BYTES + 1,
          headerPairs: MAX_PART_HEADERS,
        },
      });
    } catch (cause) {
      reject(new BadRequestError('The multipart body is malformed', { cause }));
      return;
    }
    parser.on('field', (name, value, info) => {
      if (failed) return;
      if (info.nameTruncated) {
        return fail(
          new PayloadTooLargeError(
            `A field name is longer than ${MAX_FIELD_NAME_BYTES} bytes (limit: field name size)`,
          ),
        );
      }
      if (info.valueTruncated) {
        return fail(
          new PayloadTooLargeError(`${name} is longer than ${n(MAX_FIELD_BYTES)} bytes (limit: field size)`),
        );
      }
      if (fileNames.has(name)) return fail(new BadRequestError(`${name} is sent more than once`));
      try {
        addField(fields, name, value);
      } catch (error) {
        fail(error as Error);
      }
    });
    parser.on('file', (name, stream, info) => {
      const chunks: Buffer[] = [];
      if (!name) fail(new BadRequestError('A file part has no name'));
      if (fileNames.has(name) || Object.hasOwn(fields, name)) {
        fail(new BadRequestError(`${name} is sent more than once`));
      }
      fileNames.add(name);
      stream.on('data', (chunk: Buffer) => {
        if (!failed) chunks.push(chunk);
      });
      stream.on('limit', () =>
        fail(new PayloadTooLargeError(`${name} is larger than ${n(maxFileBytes)} bytes (limit: file size)`)),
      );
      stream.on('close', () => {
        if (failed) return;
        files[name] = {
          bytes: Buffer.concat(chunks),
          filename: info.filename ?? null,
          contentType: info.mimeType,
        };
      });
    });
    parser.on('filesLimit', () =>
      fail(new PayloadTooLargeError(`The form has more than ${MAX_FORM_FILES} files (limit: form files)`)),
    );
    parser.on('fieldsLimit', () =>
      fail(new PayloadTooLargeError(`The form has more than ${MAX_FORM_FIELDS} fields (limit: form fields)`)),
    );
    parser.on('partsLimit', () =>
      fail(new PayloadTooLargeError(`The form has more than ${MAX_FORM_PARTS} parts (limit: form parts)`)),
    );
    parser.on('error', (cause) => fail(new BadRequestError('The multipart body is malformed', { cause })));
    parser.on('close', () => {
      if (!failed) resolve({ fields, files });
    });
    parser.end(body);
  });
}
