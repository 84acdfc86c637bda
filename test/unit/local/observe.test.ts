import { describe, expect, it } from 'vitest';
import { s3Operation } from '../../../local/observe.ts';

describe('s3Operation', () => {
  it('names the S3 API operation of a path-style request', () => {
    const op = (method: string, url: string, headers: Record<string, string> = {}) =>
      s3Operation(method, url, headers);
    expect(op('GET', '/b/results/j/result.jpg')).toBe('GetObject');
    expect(op('GET', '/b/results/j/result.jpg?X-Amz-Signature=abc&X-Amz-Expires=60')).toBe('GetObject');
    expect(op('HEAD', '/b/k')).toBe('HeadObject');
    expect(op('PUT', '/b/k')).toBe('PutObject');
    expect(op('PUT', '/b/k', { 'x-amz-copy-source': '/b/j' })).toBe('CopyObject');
    expect(op('PUT', '/b/k?partNumber=1&uploadId=u')).toBe('UploadPart');
    expect(op('POST', '/b/k?uploads')).toBe('CreateMultipartUpload');
    expect(op('POST', '/b/k?uploadId=u')).toBe('CompleteMultipartUpload');
    expect(op('DELETE', '/b/k?uploadId=u')).toBe('AbortMultipartUpload');
    expect(op('DELETE', '/b/k')).toBe('DeleteObject');
    expect(op('GET', '/b?list-type=2&prefix=cache%2F')).toBe('ListObjectsV2');
    expect(op('GET', '/b?uploads')).toBe('ListMultipartUploads');
  });
});
