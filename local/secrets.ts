import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * A secret generated once per data directory and kept there (mode 0600), so that a restart of the
 * local stack keeps working with the keys it printed before.
 */
export async function persistentSecret(dataDir: string, name: string, prefix: string): Promise<string> {
  const file = path.join(dataDir, name);
  try {
    return (await readFile(file, 'utf8')).trim();
  } catch {
    await mkdir(dataDir, { recursive: true });
    const secret = `${prefix}${randomBytes(24).toString('base64url')}`;
    await writeFile(file, `${secret}\n`, { mode: 0o600 });
    return secret;
  }
}
