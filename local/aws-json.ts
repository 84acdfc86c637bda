import type http from 'node:http';

/** The whole body of a request or response, as text. */
export async function readText(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks).toString('utf8');
}

/** Answer in the AWS JSON protocol the SDK clients of the stand-ins speak (1.0 or 1.1). */
export function sendAwsJson(
  res: http.ServerResponse,
  status: number,
  body: unknown,
  version: '1.0' | '1.1' = '1.0',
) {
  if (res.headersSent) return void res.destroy();
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': `application/x-amz-json-${version}`,
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}
