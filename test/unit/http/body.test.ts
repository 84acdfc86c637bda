import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { BadRequestError, PayloadTooLargeError } from '#core/errors.ts';
import {
  MAX_FIELD_BYTES,
  MAX_FIELD_NAME_BYTES,
  MAX_FORM_FIELDS,
  MAX_FORM_FILES,
  MAX_JSON_BODY_BYTES,
  MAX_JSON_DEPTH,
} from '#core/limits/request.ts';
import { parseBody } from '#http/body.ts';

const event = (contentType: string, body: Buffer): APIGatewayProxyEventV2 =>
  ({
    headers: { 'content-type': contentType },
    body: body.toString('base64'),
    isBase64Encoded: true,
  }) as unknown as APIGatewayProxyEventV2;

type Part = { name: string; value: string | Buffer; filename?: string; rawDisposition?: string };

function multipart(parts: Part[]): APIGatewayProxyEventV2 {
  const boundary = 'b0undary';
  const chunks: Buffer[] = [];
  for (const part of parts) {
    const disposition =
      part.rawDisposition ??
      `form-data; name="${part.name}"${part.filename !== undefined ? `; filename="${part.filename}"` : ''}`;
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: ${disposition}\r\n\r\n`, 'utf8'));
    chunks.push(Buffer.isBuffer(part.value) ? part.value : Buffer.from(part.value, 'utf8'));
    chunks.push(Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return event(`multipart/form-data; boundary=${boundary}`, Buffer.concat(chunks));
}

const json = (value: unknown) => event('application/json', Buffer.from(JSON.stringify(value)));
const form = (text: string) => event('application/x-www-form-urlencoded', Buffer.from(text));
const MAX_FILE = 1024 * 1024;

async function refusal(promise: Promise<unknown>) {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(Error);
  return error as Error & { status: number };
}

describe('request body parsing', () => {
  it('keeps UTF-8 file names and fields in any language as sent', async () => {
    const parsed = await parseBody(
      multipart([
        { name: 'file', value: Buffer.from([0xff, 0xd8, 0xff]), filename: 'машина 車 ü.jpg' },
        { name: 'note', value: 'Grüße, 你好' },
      ]),
      MAX_FILE,
    );
    expect(parsed.files.file!.filename).toBe('машина 車 ü.jpg');
    expect(parsed.fields.note).toBe('Grüße, 你好');
    const extended = await parseBody(
      multipart([
        {
          name: 'file',
          value: 'x',
          rawDisposition: `form-data; name="file"; filename*=UTF-8''${encodeURIComponent('voiture été.png')}`,
        },
      ]),
      MAX_FILE,
    );
    expect(extended.files.file!.filename).toBe('voiture été.png');
  });

  it('takes fields exactly at their limits', async () => {
    const fields = Array.from({ length: MAX_FORM_FIELDS }, (_, i) => ({ name: `f${i}`, value: 'v' }));
    fields[0]!.value = 'é'.repeat(MAX_FIELD_BYTES / 2);
    const parsed = await parseBody(multipart(fields), MAX_FILE);
    expect(Object.keys(parsed.fields)).toHaveLength(MAX_FORM_FIELDS);
    expect(parsed.fields.f0).toHaveLength(MAX_FIELD_BYTES / 2);
  });

  it.each([
    [
      'too many fields',
      () => Array.from({ length: MAX_FORM_FIELDS + 1 }, (_, i) => ({ name: `f${i}`, value: 'v' })),
      'limit: form fields',
    ],
    [
      'a field too long',
      () => [{ name: 'url', value: 'x'.repeat(MAX_FIELD_BYTES + 1) }],
      'limit: field size',
    ],
    [
      'a field name too long',
      () => [{ name: 'n'.repeat(MAX_FIELD_NAME_BYTES + 1), value: 'v' }],
      'limit: field name size',
    ],
    [
      'too many files',
      () =>
        Array.from({ length: MAX_FORM_FILES + 1 }, (_, i) => ({
          name: `file${i}`,
          value: 'x',
          filename: 'a.jpg',
        })),
      'limit: form files',
    ],
    [
      'a file too large',
      () => [{ name: 'file', value: Buffer.alloc(MAX_FILE + 1), filename: 'a.jpg' }],
      'limit: file size',
    ],
  ])('refuses a multipart form with %s (413 naming the limit)', async (_label, parts, limit) => {
    const error = await refusal(parseBody(multipart(parts() as Part[]), MAX_FILE));
    expect(error).toBeInstanceOf(PayloadTooLargeError);
    expect(error.message).toContain(limit);
  });

  it('refuses a field or file sent twice instead of picking one', async () => {
    const twice = await refusal(
      parseBody(
        multipart([
          { name: 'mode', value: 'analyze' },
          { name: 'mode', value: 'background' },
        ]),
        MAX_FILE,
      ),
    );
    expect(twice).toBeInstanceOf(BadRequestError);
    expect(twice.message).toBe('mode is sent more than once');
    const files = await refusal(
      parseBody(
        multipart([
          { name: 'file', value: 'a', filename: 'a.jpg' },
          { name: 'file', value: 'b', filename: 'b.jpg' },
        ]),
        MAX_FILE,
      ),
    );
    expect(files.message).toBe('file is sent more than once');
    expect((await refusal(parseBody(form('mode=plate&mode=analyze'), MAX_FILE))).message).toBe(
      'mode is sent more than once',
    );
  });

  it('applies the same field limits to urlencoded forms', async () => {
    const many = Array.from({ length: MAX_FORM_FIELDS + 1 }, (_, i) => `f${i}=v`).join('&');
    expect((await refusal(parseBody(form(many), MAX_FILE))).message).toContain('limit: form fields');
    const long = `url=${'x'.repeat(MAX_FIELD_BYTES + 1)}`;
    expect((await refusal(parseBody(form(long), MAX_FILE))).message).toContain('limit: field size');
    expect((await parseBody(form('note=%E8%BB%8A'), MAX_FILE)).fields).toEqual({ note: '車' });
  });

  it('limits JSON by size, depth and member count', async () => {
    let nested: unknown = 'leaf';
    for (let depth = 0; depth < MAX_JSON_DEPTH; depth++) nested = { a: nested };
    await expect(parseBody(json(nested), MAX_FILE)).resolves.toBeTruthy();
    const deeper = await refusal(parseBody(json({ a: nested }), MAX_FILE));
    expect(deeper).toBeInstanceOf(BadRequestError);
    expect(deeper.message).toContain('limit: JSON depth');
    const big = await refusal(parseBody(json({ url: 'x'.repeat(MAX_JSON_BODY_BYTES) }), MAX_FILE));
    expect(big).toBeInstanceOf(PayloadTooLargeError);
    expect(big.message).toContain('limit: JSON body');
    const members = Object.fromEntries(Array.from({ length: MAX_FORM_FIELDS + 1 }, (_, i) => [`k${i}`, i]));
    expect((await refusal(parseBody(json(members), MAX_FILE))).message).toContain('limit: form fields');
    const arrays = Buffer.from(`{"a":${'['.repeat(5000)}${']'.repeat(5000)}}`);
    const deep = await refusal(parseBody(event('application/json', arrays), MAX_FILE));
    expect(deep.message).toContain('limit: JSON depth');
  });
});
