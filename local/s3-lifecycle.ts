import { stat, utimes } from 'node:fs/promises';
import type { Clock } from '#core/ports.ts';

/** An expiration rule of the bucket's lifecycle configuration, as the synthesized template states it. */
export interface LifecycleRule {
  id: string;
  prefix: string;
  days: number;
}

const DAY_MS = 86_400_000;

/**
 * When S3 expires an object under a rule of `days`: its creation time plus the days, rounded up to the next
 * midnight UTC (S3 User Guide, "Lifecycle configuration elements": 10:30 UTC on 1/15 with 3 days is
 * 00:00 UTC on 1/19).
 */
export function expirationOf(created: Date, days: number): Date {
  const due = created.getTime() + days * DAY_MS;
  return new Date((Math.floor(due / DAY_MS) + 1) * DAY_MS);
}

type Listed = { objects: Array<{ key: string }> };
/** The members of s3rver's FilesystemStore that the lifecycle works through (it ships no types). */
interface ObjectFiles {
  getResourcePath(bucket: string, key: string, resource: string): string;
  existsObject(bucket: string, key: string): Promise<boolean>;
  getObject(bucket: string, key: string, options?: unknown): Promise<unknown>;
  listObjects(bucket: string, options: unknown): Promise<Listed>;
  putObject(object: { bucket: string; key: string }): Promise<unknown>;
  copyObject(
    srcBucket: string,
    srcKey: string,
    bucket: string,
    key: string,
    meta?: unknown,
  ): Promise<unknown>;
  deleteObject(bucket: string, key: string): Promise<void>;
}

/**
 * The bucket's lifecycle rules applied to s3rver's store, which has none. An object is stamped with `clock`'s
 * time when it is written (its LastModified), and from its expiration on every read finds it gone: the
 * object is deleted at that access, and the read answers as for a missing key (404 NoSuchKey, or 403 to a
 * role that may not list). S3 itself removes an expired object asynchronously, maybe days later, so the code
 * must not count on reading it after its expiration; here it never can, which keeps that promise honest.
 * `clock` is the stack's, which tests move forward instead of waiting days.
 */
export function applyLifecycle(store: object, rules: readonly LifecycleRule[], clock: Clock): void {
  if (rules.length === 0) return;
  const files = store as ObjectFiles;
  const original = {
    existsObject: files.existsObject.bind(files),
    getObject: files.getObject.bind(files),
    listObjects: files.listObjects.bind(files),
    putObject: files.putObject.bind(files),
    copyObject: files.copyObject.bind(files),
  };
  const objectPath = (bucket: string, key: string) => files.getResourcePath(bucket, key, 'object');
  const stamp = async (bucket: string, key: string) => {
    const now = clock.now();
    await utimes(objectPath(bucket, key), now, now);
  };
  /** Whether a rule has expired the object; an expired one is deleted now. */
  const expired = async (bucket: string, key: string): Promise<boolean> => {
    const days = rules.filter((rule) => key.startsWith(rule.prefix)).map((rule) => rule.days);
    if (days.length === 0) return false;
    const created = await stat(objectPath(bucket, key)).then(
      (found) => found.mtime,
      () => null,
    );
    if (!created || clock.now() < expirationOf(created, Math.min(...days))) return false;
    await files.deleteObject(bucket, key);
    return true;
  };

  files.putObject = async (object) => {
    const written = await original.putObject(object);
    await stamp(object.bucket, object.key);
    return written;
  };
  files.copyObject = async (srcBucket, srcKey, bucket, key, meta) => {
    const copied = await original.copyObject(srcBucket, srcKey, bucket, key, meta);
    await stamp(bucket, key);
    return copied;
  };
  files.existsObject = async (bucket, key) =>
    (await original.existsObject(bucket, key)) && !(await expired(bucket, key));
  files.getObject = async (bucket, key, options) =>
    (await expired(bucket, key)) ? null : original.getObject(bucket, key, options);
  files.listObjects = async (bucket, options) => {
    const listed = await original.listObjects(bucket, options);
    const gone = await Promise.all(listed.objects.map((object) => expired(bucket, object.key)));
    return { ...listed, objects: listed.objects.filter((_, i) => !gone[i]) };
  };
}
