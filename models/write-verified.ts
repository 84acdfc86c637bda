import { createHash, randomBytes } from 'node:crypto';
import { open, rename, rm } from 'node:fs/promises';
import type { ModelManifest } from './manifest.ts';

/**
 * Writes a model file made in code (`parts` in order) to a temporary name beside `destination`, checks
 * the whole against the manifest's sha256 and size, and only then renames it into place: a reader never
 * sees a partial or wrong file, and two processes doing this at once both end with the same good file.
 */
export async function writeVerified(
  model: ModelManifest,
  destination: string,
  parts: Buffer | readonly Buffer[],
  origin: string,
): Promise<void> {
  const chunks = Buffer.isBuffer(parts) ? [parts] : parts;
  const digest = createHash('sha256');
  let bytes = 0;
  for (const chunk of chunks) {
    digest.update(chunk);
    bytes += chunk.length;
  }
  const actual = digest.digest('hex');
  if (actual !== model.sha256 || (model.bytes !== undefined && bytes !== model.bytes)) {
    throw new Error(
      `model ${model.id}: ${origin}: sha256 ${actual} (${bytes} bytes), expected ${model.sha256}` +
        (model.bytes === undefined ? '' : ` (${model.bytes} bytes)`),
    );
  }
  const temporary = `${destination}.${randomBytes(6).toString('hex')}.part`;
  try {
    const file = await open(temporary, 'w');
    try {
      // writev takes at most IOV_MAX (1024) buffers a call.
      for (let i = 0; i < chunks.length; i += 1024) await file.writev(chunks.slice(i, i + 1024));
    } finally {
      await file.close();
    }
    await rename(temporary, destination);
  } finally {
    await rm(temporary, { force: true });
  }
}
