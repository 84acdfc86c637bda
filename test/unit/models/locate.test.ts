import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ModelUnavailableError } from '#core/errors.ts';
import { defaultModelSearchDirs, locateModelFile } from '#models/locate.ts';
import { MODELS } from '#models/manifest.ts';

const content = Buffer.from('not really an onnx graph, but the bytes are what is checked');
const fake = {
  id: 'fake-detector',
  name: 'Fake detector',
  file: 'fake-detector.onnx',
  sha256: createHash('sha256').update(content).digest('hex'),
};

let root: string;
let first: string;
let second: string;

beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'locate-'));
  first = path.join(root, 'first');
  second = path.join(root, 'second');
  await mkdir(first);
  await mkdir(second);
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('locateModelFile', () => {
  it('finds the file in a later directory and returns its absolute path', async () => {
    await writeFile(path.join(second, fake.file), content);
    const found = await locateModelFile(fake, { searchDirs: [first, second] });
    expect(found).toBe(path.join(second, fake.file));
    expect(path.isAbsolute(found)).toBe(true);
  });

  it('refuses a file with the wrong checksum and says so', async () => {
    await writeFile(path.join(first, fake.file), 'tampered');
    const error = await locateModelFile(fake, { searchDirs: [first, second] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelUnavailableError);
    expect((error as Error).message).toMatch(/wrong checksum/);
    expect((error as Error).message).toContain(path.join(first, fake.file));
    expect((error as Error).message).toContain(fake.sha256);
  });

  it('skips a file with the wrong checksum for a good one further on', async () => {
    await writeFile(path.join(first, fake.file), 'tampered');
    await writeFile(path.join(second, fake.file), content);
    await expect(locateModelFile(fake, { searchDirs: [first, second] })).resolves.toBe(
      path.join(second, fake.file),
    );
  });

  it('refuses a file of the wrong size without reading it', async () => {
    await writeFile(path.join(first, fake.file), content);
    const error = await locateModelFile(
      { ...fake, bytes: content.length + 1 },
      { searchDirs: [first] },
    ).catch((e: unknown) => e);
    expect((error as Error).message).toMatch(/wrong checksum \(size \d+ bytes, expected \d+\)/);
  });

  it('names the model, the file, every directory and the checksum when nothing is found', async () => {
    const missing = path.join(root, 'missing');
    const error = await locateModelFile(fake, { searchDirs: [first, second, missing] }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ModelUnavailableError);
    const { message } = error as Error;
    for (const part of [fake.id, fake.file, first, second, missing, fake.sha256])
      expect(message).toContain(part);
  });

  it('does not rehash an unchanged file, and rehashes once its mtime moves', async () => {
    const file = path.join(first, fake.file);
    // Whole seconds, so that setting the time again gives the very same mtime.
    const mtime = new Date('2026-01-02T03:04:05Z');
    await writeFile(file, content);
    await utimes(file, mtime, mtime);
    await locateModelFile(fake, { searchDirs: [first] });
    // Same size, same mtime: the memo answers, which is what a warm process relies on.
    await writeFile(file, Buffer.alloc(content.length, 'x'));
    await utimes(file, mtime, mtime);
    await expect(locateModelFile(fake, { searchDirs: [first] })).resolves.toBe(file);
    await utimes(file, mtime, new Date(mtime.getTime() + 5_000));
    await expect(locateModelFile(fake, { searchDirs: [first] })).rejects.toThrow(/wrong checksum/);
  });
});

describe('defaultModelSearchDirs', () => {
  it('looks in the project cache, the shared folder beside the checkout, then /opt/models', () => {
    expect(defaultModelSearchDirs('/srv/photo-jobs')).toEqual([
      '/srv/photo-jobs/.cache/models',
      '/srv/shared/models',
      '/opt/models',
    ]);
  });
});

describe('MODELS', () => {
  it('records a checksum, a file and a license for every model', () => {
    for (const [id, model] of Object.entries(MODELS)) {
      expect(model.id).toBe(id);
      expect(model.sha256).toMatch(/^[0-9a-f]{64}$/);
      // The recogniser's dictionary is the one model file that is not a graph.
      expect(model.file).toMatch(id === 'ppocr-keys' ? /\.txt$/ : /\.onnx$/);
      expect(model.license).not.toBe('');
    }
    expect(MODELS.isnet.licenseNote).toMatch(/AGPL-3\.0/);
  });
});
