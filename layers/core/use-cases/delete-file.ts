import { NotFoundError } from '../errors.ts';
import { type Caller, mayAccess } from '../keys/caller.ts';
import type { FileRepository, ObjectStore } from '../ports.ts';

/**
 * Delete a file (DELETE /files/{file_id}).
 * 1. Unknown, expired or another owner's file: 404 (the master key may delete any).
 * 2. Delete the stored bytes first: should the record's removal fail, a retry finds it and finishes.
 * 3. Remove the record; an asset's file takes the asset with it, so its id answers 404 from then on.
 */
export async function deleteFile(
  deps: { files: FileRepository; objects: ObjectStore },
  caller: Caller,
  fileId: number,
): Promise<void> {
  const file = await deps.files.get(fileId);
  if (!file || !mayAccess(caller, file)) {
    throw new NotFoundError(`File ${fileId} does not exist`);
  }
  await deps.objects.delete(file.key);
  if (!(await deps.files.delete(file))) throw new NotFoundError(`File ${fileId} does not exist`);
}
