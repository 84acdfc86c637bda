import { NotFoundError, PayloadTooLargeError, UnsupportedMediaTypeError } from '../errors.ts';
import { extensionOf, sniffImageType } from '../images.ts';
import type { ApiKeyRepository, ObjectStore } from '../ports.ts';
import { storageKeys } from '../storage-layout.ts';

/**
 * Store (or with `null`, forget) the background image a key uses for `studio_background` when a request
 * sends no `background_file` (spec 2.1). It lives under `keys/`, which has no expiry: as long as the key.
 * 1. Check the bytes are a JPG, PNG or WEBP of acceptable size.
 * 2. Store them and point the key's defaults at them; a preset named in a request still wins.
 */
export async function setKeyBackground(
  deps: { keys: ApiKeyRepository; objects: ObjectStore; maxSourceBytes: number },
  keyId: string,
  bytes: Buffer | null,
): Promise<string | null> {
  const record = await deps.keys.findById(keyId);
  if (!record) throw new NotFoundError(`API key ${keyId} does not exist`);
  let backgroundFileKey: string | null = null;
  if (bytes) {
    if (bytes.length > deps.maxSourceBytes) {
      throw new PayloadTooLargeError(`The background is larger than ${deps.maxSourceBytes} bytes`);
    }
    const type = sniffImageType(bytes);
    if (!type) throw new UnsupportedMediaTypeError('The background is not a JPG, PNG or WEBP image');
    backgroundFileKey = storageKeys.keyBackground(keyId, extensionOf(type));
    await deps.objects.put(backgroundFileKey, bytes, type);
  }
  await deps.keys.updateDefaults(keyId, { ...record.defaults, backgroundFileKey });
  return backgroundFileKey;
}
