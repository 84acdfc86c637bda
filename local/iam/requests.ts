import { type Json, LOCAL_ACCOUNT, LOCAL_REGION } from './policies.ts';

/** One IAM authorization a request needs. */
export interface AuthRequest {
  action: string;
  resource: string;
  context?: Record<string, string | string[]>;
}

const arnPrefix = (service: string) => `arn:aws:${service}:${LOCAL_REGION}:${LOCAL_ACCOUNT}`;
const tableArn = (table: string) =>
  table.startsWith('arn:') ? table : `${arnPrefix('dynamodb')}:table/${table}`;

/** The authorizations a DynamoDB request needs, from its X-Amz-Target operation and JSON body. */
export function dynamodbRequests(operation: string, body: Json): AuthRequest[] {
  const action = (op: string) => `dynamodb:${op}`;
  switch (operation) {
    case 'TransactWriteItems': {
      const kinds = {
        Put: 'PutItem',
        Update: 'UpdateItem',
        Delete: 'DeleteItem',
        ConditionCheck: 'ConditionCheckItem',
      };
      return (body.TransactItems ?? []).flatMap((item: Json) =>
        Object.entries(kinds)
          .filter(([kind]) => item?.[kind])
          .map(([kind, op]) => ({ action: action(op), resource: tableArn(item[kind].TableName) })),
      );
    }
    case 'TransactGetItems':
      return (body.TransactItems ?? []).map((item: Json) => ({
        action: action('GetItem'),
        resource: tableArn(item?.Get?.TableName),
      }));
    case 'BatchGetItem':
    case 'BatchWriteItem':
      return Object.keys(body.RequestItems ?? {}).map((table) => ({
        action: action(operation),
        resource: tableArn(table),
      }));
    case 'ListTables':
      return [{ action: action(operation), resource: '*' }];
    case 'Query':
    case 'Scan':
      return [
        {
          action: action(operation),
          resource: `${tableArn(body.TableName)}${body.IndexName ? `/index/${body.IndexName}` : ''}`,
        },
      ];
    default:
      return [{ action: action(operation), resource: tableArn(body.TableName ?? body.ResourceArn) }];
  }
}

/** The authorizations a Step Functions request needs. */
export function sfnRequests(operation: string, body: Json): AuthRequest[] {
  const resource = body.executionArn ?? body.stateMachineArn;
  return [{ action: `states:${operation}`, resource: resource ?? '*' }];
}

/** The authorizations an EventBridge PutEvents needs: one per bus its entries name. */
export function eventsRequests(operation: string, body: Json): AuthRequest[] {
  if (operation !== 'PutEvents') return [{ action: `events:${operation}`, resource: '*' }];
  const buses = new Set<string>(
    (body.Entries ?? []).map((entry: Json) => String(entry?.EventBusName ?? 'default')),
  );
  return [...buses].map((bus) => ({
    action: 'events:PutEvents',
    resource: bus.startsWith('arn:') ? bus : `${arnPrefix('events')}:event-bus/${bus}`,
  }));
}

/** What an S3 request addresses (path-style), with its query. */
export function s3Target(url: string): { bucket: string; key: string; query: URLSearchParams } {
  const parsed = new URL(url, 'http://s3.local');
  const [bucket = '', ...rest] = parsed.pathname.slice(1).split('/');
  return {
    bucket: decodeURIComponent(bucket),
    key: rest.map(decodeURIComponent).join('/'),
    query: parsed.searchParams,
  };
}

/**
 * The check S3 makes before it answers a read of a missing key 404 rather than 403: s3:ListBucket on the
 * bucket, as AWS documents it. AWS does not say which s3:prefix, if any, that check carries, so here it
 * carries none: a listing grant scoped by prefix never earns the 404, and no code can come to rely on it.
 */
export function missingKeyRequest(bucket: string): AuthRequest {
  return { action: 's3:ListBucket', resource: `arn:aws:s3:::${bucket}` };
}

/** The authorizations an S3 request (path-style) needs, from its method, URL and headers. */
export function s3Requests(
  method: string,
  url: string,
  headers: Record<string, string | string[] | undefined>,
): AuthRequest[] {
  const { bucket, key, query } = s3Target(url);
  const bucketArn = `arn:aws:s3:::${bucket}`;
  const unmapped = () =>
    new Error(`Local IAM maps no S3 request ${method} ${url.split('?')[0]}?${[...query.keys()].join('&')}`);
  if (!bucket) {
    if (method === 'GET') return [{ action: 's3:ListAllMyBuckets', resource: '*' }];
    throw unmapped();
  }
  if (!key) {
    if (method === 'GET' && query.has('uploads'))
      return [{ action: 's3:ListBucketMultipartUploads', resource: bucketArn }];
    if (method === 'GET' && query.has('location'))
      return [{ action: 's3:GetBucketLocation', resource: bucketArn }];
    if (
      (method === 'GET' && ![...query.keys()].some((name) => !LIST_PARAMETERS.has(name))) ||
      method === 'HEAD'
    ) {
      const prefix = query.get('prefix');
      return [
        {
          action: 's3:ListBucket',
          resource: bucketArn,
          ...(prefix !== null ? { context: { 's3:prefix': prefix } } : {}),
        },
      ];
    }
    if (method === 'PUT' && [...query.keys()].length === 0)
      return [{ action: 's3:CreateBucket', resource: bucketArn }];
    if (method === 'DELETE' && [...query.keys()].length === 0)
      return [{ action: 's3:DeleteBucket', resource: bucketArn }];
    throw unmapped();
  }
  const objectArn = `${bucketArn}/${key}`;
  const object = (action: string): AuthRequest => ({ action, resource: objectArn });
  const copySource = () => {
    const header = headers['x-amz-copy-source'];
    if (!header) return [];
    const source = decodeURIComponent(String(header).split('?')[0]!).replace(/^\//, '');
    return [{ action: 's3:GetObject', resource: `arn:aws:s3:::${source}` }];
  };
  const subresources = [...query.keys()].filter(
    (name) => !OBJECT_PARAMETERS.has(name) && !name.startsWith('X-Amz-'),
  );
  if (subresources.length > 0) throw unmapped();
  switch (method) {
    case 'GET':
      return [object(query.has('uploadId') ? 's3:ListMultipartUploadParts' : 's3:GetObject')];
    case 'HEAD':
      return [object('s3:GetObject')];
    case 'PUT':
      return [object('s3:PutObject'), ...copySource()];
    case 'POST':
      if (query.has('uploads') || query.has('uploadId')) return [object('s3:PutObject')];
      throw unmapped();
    case 'DELETE':
      return [object(query.has('uploadId') ? 's3:AbortMultipartUpload' : 's3:DeleteObject')];
    default:
      throw unmapped();
  }
}
const LIST_PARAMETERS = new Set([
  'list-type',
  'prefix',
  'delimiter',
  'max-keys',
  'continuation-token',
  'start-after',
  'marker',
  'encoding-type',
  'fetch-owner',
  'x-id',
]);
const OBJECT_PARAMETERS = new Set([
  'uploads',
  'uploadId',
  'partNumber',
  'versionId',
  'x-id',
  'response-content-type',
  'response-content-disposition',
  'response-cache-control',
  'response-content-encoding',
  'response-content-language',
  'response-expires',
]);

/** The access key id of a SigV4-signed request: its Authorization header, or a presigned URL's X-Amz-Credential. */
export function accessKeyOf(authorization: string | undefined, url: string): string | undefined {
  const fromHeader = /Credential=([^/,\s]+)\//.exec(authorization ?? '')?.[1];
  if (fromHeader) return fromHeader;
  const credential = new URL(url, 'http://local').searchParams.get('X-Amz-Credential');
  return credential?.split('/')[0] || undefined;
}
