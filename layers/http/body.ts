import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import busboy from 'busboy';
import { BadRequestError, PayloadTooLargeError, UnsupportedMediaTypeError } from '#core/errors.ts';
import type { UploadedFile } from '#core/jobs/input.ts';

export interface ParsedBody {
  fields: Record<string, unknown>;
  files: Record<string, UploadedFile>;
}

export const header = (event: APIGatewayProxyEventV2, name: string): string | undefined =>
  event.headers?.[name.toLowerCase()];

export function rawBody(event: APIGatewayProxyEventV2): Buffer {
  if (!event.body) return Buffer.alloc(0);
  return Buffer.from(event.body, event.isBase64Encoded ? 'base64' : 'utf8');
}

/** JSON, multipart/form-data and urlencoded forms all land in the same shape, so routes validate one way. */
export async function parseBody(event: APIGatewayProxyEventV2, maxFileBytes: number): Promise<ParsedBody> {
  const contentType = header(event, 'content-type') ?? '';
  const body = rawBody(event);
  if (body.length === 0) return { fields: {}, files: {} };
  if (/^application\/(.+\+)?json/i.test(contentType)) {
    try {
      const parsed: unknown = JSON.parse(body.toString('utf8'));
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
        throw new BadRequestError('The JSON body must be an object');
      }
      return { fields: parsed as Record<string, unknown>, files: {} };
    } catch (error) {
      if (error instanceof BadRequestError) throw error;
      throw new BadRequestError('The body is not valid JSON');
    }
  }
  if (/^application\/x-www-form-urlencoded/i.test(contentType)) {
    return { fields: Object.fromEntries(new URLSearchParams(body.toString('utf8'))), files: {} };
  }
  if (/^multipart\/form-data/i.test(contentType)) return parseMultipart(contentType, body, maxFileBytes);
  throw new UnsupportedMediaTypeError('Send application/json, multipart/form-data or a urlencoded form');
}

function parseMultipart(contentType: string, body: Buffer, maxFileBytes: number): Promise<ParsedBody> {
  return new Promise((resolve, reject) => {
    const fields: Record<string, unknown> = {};
    const files: Record<string, UploadedFile> = {};
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: { 'content-type': contentType },
        limits: { fileSize: maxFileBytes, files: 4, fields: 50 },
      });
    } catch (cause) {
      reject(new BadRequestError('The multipart body is malformed', { cause }));
      return;
    }
    parser.on('field', (name, value) => {
      fields[name] = value;
    });
    parser.on('file', (name, stream, info) => {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('limit', () =>
        reject(new PayloadTooLargeError(`${name} is larger than ${maxFileBytes} bytes`)),
      );
      stream.on('close', () => {
        files[name] = {
          bytes: Buffer.concat(chunks),
          filename: info.filename ?? null,
          contentType: info.mimeType,
        };
      });
    });
    parser.on('error', (cause) => reject(new BadRequestError('The multipart body is malformed', { cause })));
    parser.on('close', () => resolve({ fields, files }));
    parser.end(body);
  });
}
