import { type FileRecord, type PageQuery, pageOf } from '../files/files.ts';
import { type Caller, ownerIdOf } from '../keys/caller.ts';
import type { FileRepository } from '../ports.ts';

/**
 * List files (GET /files).
 * 1. An ordinary key lists its own files; the master key lists everyone's (the legacy global listing).
 * 2. Read one row more than the page holds: it tells whether there is a next page.
 * 3. Return the page, newest first, and the cursor for `before` (null on the last page).
 */
export async function listFiles(
  deps: { files: FileRepository },
  caller: Caller,
  query: PageQuery,
): Promise<{ files: FileRecord[]; nextCursor: number | null }> {
  const owner = caller.kind === 'master' ? null : ownerIdOf(caller);
  const rows = await deps.files.list(owner, query.before, query.limit + 1);
  const { items, nextCursor } = pageOf(rows, query.limit);
  return { files: items, nextCursor };
}
