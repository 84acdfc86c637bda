/**
 * What the embedded stack did, one record per request a stand-in answered and per function invocation, for
 * a reader that counts them (`npm run cost -- trace`, tools/cost/trace.ts). The stand-ins report facts only
 * (who called, which operation, which items and bytes); what they cost is the reader's business.
 */

/** DynamoDB's wire format of an item, as the stand-in stores it. */
export type DynamoItem = Record<string, unknown>;

/** An item a write touched: as it was before the request and as the request left it (null: absent). */
export interface DynamoWrite {
  table: string;
  before: DynamoItem | null;
  after: DynamoItem | null;
  /** A transaction's ConditionCheck: read for its condition, never written. */
  checkOnly?: boolean;
}

export type StandInCall =
  | {
      service: 'lambda';
      /** The function's logical id in the template. */
      function: string;
      /** From the start of its run (after any wait for a local instance) to its answer. */
      durationMs: number;
    }
  | {
      service: 'apigateway';
      routeKey: string;
      function: string;
      /** The request's body as it arrived (what HTTP APIs meter in 512 KB steps). */
      requestBytes: number;
      responseBytes: number;
    }
  | {
      service: 'dynamodb';
      /** The signer's access key id: a function's logical id, or the admin's. */
      caller: string | undefined;
      operation: string;
      /** False when DynamoDB refused it (a failed condition, a cancelled transaction). */
      ok: boolean;
      /** The read capacity the stand-in's engine reports for the items it read (0 for a write). */
      readUnits: number;
      writes: DynamoWrite[];
    }
  | {
      service: 's3';
      caller: string | undefined;
      /** The S3 API operation (`s3Operation`), not the IAM action. */
      operation: string;
      key: string;
      /** Signed in its query: a URL the service handed out, fetched by its client. */
      presigned: boolean;
      /** The body's bytes (Content-Length): what a PUT stores. */
      requestBytes: number;
      status: number;
    }
  | { service: 'states'; caller: string | undefined; operation: string }
  | {
      service: 'events';
      caller: string | undefined;
      operation: string;
      /** Each entry's bytes as EventBridge measures them (billed in 64 KB chunks). */
      entryBytes: number[];
    };

export type Observer = (call: StandInCall) => void;

/** The S3 API operation a path-style request is, from its method, query and headers. */
export function s3Operation(
  method: string,
  url: string,
  headers: Record<string, string | string[] | undefined>,
): string {
  const parsed = new URL(url, 'http://s3.local');
  const key = parsed.pathname.slice(1).split('/').slice(1).join('/');
  const query = parsed.searchParams;
  const copy = headers['x-amz-copy-source'] !== undefined;
  if (!key) {
    if (method === 'GET' && query.has('uploads')) return 'ListMultipartUploads';
    if (method === 'GET') return query.get('list-type') === '2' ? 'ListObjectsV2' : 'ListObjects';
    if (method === 'POST' && query.has('delete')) return 'DeleteObjects';
    if (method === 'HEAD') return 'HeadBucket';
    return `${method} bucket`;
  }
  switch (method) {
    case 'GET':
      return query.has('uploadId') ? 'ListParts' : 'GetObject';
    case 'HEAD':
      return 'HeadObject';
    case 'PUT':
      if (query.has('partNumber')) return copy ? 'UploadPartCopy' : 'UploadPart';
      return copy ? 'CopyObject' : 'PutObject';
    case 'POST':
      if (query.has('uploads')) return 'CreateMultipartUpload';
      if (query.has('uploadId')) return 'CompleteMultipartUpload';
      return 'PostObject';
    case 'DELETE':
      return query.has('uploadId') ? 'AbortMultipartUpload' : 'DeleteObject';
    default:
      return method;
  }
}
