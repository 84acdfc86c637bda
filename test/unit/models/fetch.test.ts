import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { deriveDynamicLpdYunet } from '#models/derive-lpd-yunet.ts';
import { fetchModels, MAX_REDIRECTS, modelStatuses, sourceUrl } from '#models/fetch.ts';
import { npmModelDirs, npmModelFile } from '#models/locate.ts';
import { MODELS, type ModelId, type ModelManifest } from '#models/manifest.ts';

const SHARED_MODELS = path.resolve(import.meta.dirname, '..', '..', '..', '..', 'shared', 'models');
const hasSharedModels = existsSync(path.join(SHARED_MODELS, MODELS['nanodet-plus'].file));
const DOWNLOADED: ModelId[] = ['lpd-yunet-fixed', 'nanodet-plus', 'mobilenetv2-int8'];

type Route = (req: http.IncomingMessage, res: http.ServerResponse) => void;

/** A model mirror on loopback: each path answers as its route says; `requests` counts what arrived. */
async function startMirror(routes: Record<string, Route>) {
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    requests.push(req.url ?? '');
    const route = routes[req.url ?? ''];
    if (route) return route(req, res);
    res.writeHead(404).end('not here');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const serveFile =
  (file: string): Route =>
  (_req, res) => {
    const bytes = readFileSync(file);
    res.writeHead(200, { 'content-length': bytes.length }).end(bytes);
  };

let cacheDir: string;
beforeEach(async () => {
  cacheDir = await mkdtemp(path.join(tmpdir(), 'photo-jobs-models-'));
  return () => rm(cacheDir, { recursive: true, force: true });
});
/** Only the cache: a fetch test must not find the files of ../shared and skip the download. */
const only = () => ({ cacheDir, searchDirs: [cacheDir] });

describe('model sources', () => {
  it('pins every download to a commit, never a branch that moves', () => {
    const urls = Object.values(MODELS as Record<string, ModelManifest>).flatMap((model) =>
      model.url ? [model.url] : [],
    );
    expect(urls.length).toBeGreaterThan(0);
    for (const url of urls) {
      const { hostname, pathname } = new URL(url);
      expect(hostname, `${url}: only GitHub's raw/<commit> URLs are checked for pinning`).toBe('github.com');
      // github.com/<owner>/<repo>/raw/<ref>/<path>: the ref must be a full commit id.
      expect(pathname.split('/')[4], `${url} is not pinned to a commit`).toMatch(/^[0-9a-f]{40}$/);
    }
  });

  it('fetches from the official hosts recorded in the manifest unless a mirror is named', () => {
    expect(sourceUrl(MODELS['nanodet-plus'])).toBe(
      'https://github.com/opencv/opencv_zoo/raw/966be4cb6eefc2a4f586ed0581bf4bbaa2533070/models/object_detection_nanodet/object_detection_nanodet_2022nov.onnx',
    );
    expect(sourceUrl(MODELS['mobilenetv2-int8'])).toMatch(/^https:\/\/github\.com\/onnx\/models\//);
    expect(sourceUrl(MODELS['nanodet-plus'], 'https://models.example.com/photo-jobs/')).toBe(
      'https://models.example.com/photo-jobs/object_detection_nanodet_2022nov.onnx',
    );
    expect(sourceUrl(MODELS['nanodet-plus'], 'http://127.0.0.1:8080')).toMatch(
      /^http:\/\/127\.0\.0\.1:8080\//,
    );
    expect(sourceUrl(MODELS['nanodet-plus'], 'http://[::1]:8080')).toMatch(/^http:\/\/\[::1\]:8080\//);
  });

  it.each(['http://10.0.0.5', 'http://models.example.com', 'http://169.254.169.254', 'ftp://127.0.0.1'])(
    'refuses the mirror %s before sending anything',
    async (base) => {
      expect(() => sourceUrl(MODELS['nanodet-plus'], base)).toThrow(/nanodet-plus: .*refused, .*https only/);
      let called = false;
      const spy = (async () => {
        called = true;
        throw new Error('must not be called');
      }) as unknown as typeof fetch;
      await expect(fetchModels({ ...only(), baseUrl: base, fetch: spy }, ['nanodet-plus'])).rejects.toThrow(
        /^model nanodet-plus: .* refused/,
      );
      expect(called).toBe(false);
      expect(await readdir(cacheDir)).toEqual([]);
    },
  );
});

describe('a mirror that misbehaves leaves nothing in the cache and names the model, the URL and the fault', () => {
  const nanodet = MODELS['nanodet-plus'];
  const at = `/${nanodet.file}`;
  const expectFailure = async (routes: Record<string, Route>, fault: RegExp) => {
    const mirror = await startMirror(routes);
    try {
      const failure = fetchModels({ ...only(), baseUrl: mirror.base }, ['nanodet-plus']);
      await expect(failure).rejects.toThrow(
        new RegExp(`^model nanodet-plus: ${mirror.base}${at}: ${fault.source}`),
      );
      expect(await readdir(cacheDir)).toEqual([]);
      return mirror.requests;
    } finally {
      await mirror.close();
    }
  };

  it('404', () => expectFailure({}, /HTTP 404$/));

  it('a truncated body', () =>
    expectFailure(
      {
        [at]: (_req, res) => {
          res.writeHead(200, { 'content-length': nanodet.bytes });
          res.write(Buffer.alloc(1000));
          setTimeout(() => res.destroy(), 50);
        },
      },
      /download failed after 1000 bytes/,
    ));

  it('the right size with the wrong checksum', () =>
    expectFailure(
      { [at]: (_req, res) => res.writeHead(200).end(Buffer.alloc(nanodet.bytes)) },
      new RegExp(
        `sha256 ${createHash('sha256').update(Buffer.alloc(nanodet.bytes)).digest('hex')}, expected`,
      ),
    ));

  it('a redirect loop, followed at most five times', async () => {
    const requests = await expectFailure(
      { [at]: (_req, res) => res.writeHead(302, { location: at }).end() },
      new RegExp(`more than ${MAX_REDIRECTS} redirects`),
    );
    expect(requests).toHaveLength(MAX_REDIRECTS + 1);
  });

  it('a redirect off loopback over http is refused without following it', async () => {
    const mirror = await startMirror({
      [at]: (_req, res) => res.writeHead(302, { location: 'http://10.1.2.3/x.onnx' }).end(),
    });
    try {
      await expect(fetchModels({ ...only(), baseUrl: mirror.base }, ['nanodet-plus'])).rejects.toThrow(
        /^model nanodet-plus: http:\/\/10\.1\.2\.3\/x\.onnx: refused/,
      );
      expect(mirror.requests).toEqual([at]);
      expect(await readdir(cacheDir)).toEqual([]);
    } finally {
      await mirror.close();
    }
  });
});

describe.skipIf(!hasSharedModels)('fetching from a loopback mirror of the real files', () => {
  let mirror: Awaited<ReturnType<typeof startMirror>>;
  beforeAll(async () => {
    mirror = await startMirror(
      Object.fromEntries(
        DOWNLOADED.map((id) => [`/${MODELS[id].file}`, serveFile(path.join(SHARED_MODELS, MODELS[id].file))]),
      ),
    );
  });
  afterAll(() => mirror?.close());

  it('downloads, derives and verifies every file, leaving no temporary file behind', async () => {
    const ids: ModelId[] = ['lpd-yunet', 'nanodet-plus', 'mobilenetv2-int8'];
    const found = await fetchModels({ ...only(), baseUrl: mirror.base }, ids);
    expect([...found.keys()]).toEqual(ids);
    expect((await readdir(cacheDir)).sort()).toEqual(
      [...DOWNLOADED, 'lpd-yunet'].map((id) => MODELS[id as ModelId].file).sort(),
    );
    const statuses = await modelStatuses(cacheDir, ids, [cacheDir]);
    expect(statuses.map((status) => status.file !== null)).toEqual([true, true, true]);
    // A second fetch finds everything and downloads nothing.
    const before = mirror.requests.length;
    await fetchModels({ ...only(), baseUrl: mirror.base }, ids);
    expect(mirror.requests.length).toBe(before);
  });

  it('reports a corrupted cached file in verify and replaces it on fetch', async () => {
    const file = path.join(cacheDir, MODELS['nanodet-plus'].file);
    await writeFile(file, Buffer.alloc(MODELS['nanodet-plus'].bytes, 7));
    const [corrupt] = await modelStatuses(cacheDir, ['nanodet-plus'], [cacheDir]);
    expect(corrupt).toMatchObject({ file: null, problem: expect.stringMatching(/wrong checksum/) });
    await fetchModels({ ...only(), baseUrl: mirror.base }, ['nanodet-plus']);
    const [fixed] = await modelStatuses(cacheDir, ['nanodet-plus'], [cacheDir]);
    expect(fixed?.file).toBe(file);
    expect(
      createHash('sha256')
        .update(await readFile(file))
        .digest('hex'),
    ).toBe(MODELS['nanodet-plus'].sha256);
  });

  it('derives the dynamic LPD-YuNet file byte for byte from the official fixed-input one', () => {
    const derived = deriveDynamicLpdYunet(
      readFileSync(path.join(SHARED_MODELS, MODELS['lpd-yunet-fixed'].file)),
    );
    expect(derived.length).toBe(MODELS['lpd-yunet'].bytes);
    expect(createHash('sha256').update(derived).digest('hex')).toBe(MODELS['lpd-yunet'].sha256);
  });
});

const OCR: ModelId[] = ['ppocr-det', 'ppocr-rec', 'ppocr-keys'];
const ocrInPackage = OCR.every((id) => {
  const npmFile = (MODELS[id] as ModelManifest).npmFile;
  return npmFile !== undefined && npmModelFile(npmFile) !== null;
});

describe.skipIf(!ocrInPackage)('the text models shipped in an npm package', () => {
  it('are copied from the package into the cache, checked, with nothing downloaded', async () => {
    let called = false;
    const spy = (async () => {
      called = true;
      throw new Error('must not be called');
    }) as unknown as typeof fetch;
    const found = await fetchModels({ ...only(), fetch: spy }, OCR);
    expect([...found.values()]).toEqual(OCR.map((id) => path.join(cacheDir, MODELS[id].file)));
    expect(called).toBe(false);
    expect(
      createHash('sha256')
        .update(await readFile(found.get('ppocr-rec')!))
        .digest('hex'),
    ).toBe(MODELS['ppocr-rec'].sha256);
  });

  it('are found where npm put them by a running service, verified like any other', async () => {
    const statuses = await modelStatuses(cacheDir, OCR, npmModelDirs());
    expect(statuses.map((s) => s.file && path.basename(s.file))).toEqual(OCR.map((id) => MODELS[id].file));
  });
});

describe('a text model whose package is not installed', () => {
  it('is not looked for there, and without a mirror its fetch fails naming the model', async () => {
    expect(npmModelFile({ package: '@photo-jobs/no-such-package', path: 'assets/x.onnx' })).toBeNull();
    if (ocrInPackage) return;
    await expect(fetchModels(only(), ['ppocr-det'])).rejects.toThrow(/ppocr-det: .*no mirror named/);
    expect(await readdir(cacheDir)).toEqual([]);
  });
});

describe('npm run models -- list', () => {
  it('marks a manifest model the service does not load as not used, not as missing, and exits 0', () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'bin/models.ts', 'list'], {
      cwd: path.resolve(import.meta.dirname, '..', '..', '..'),
      env: { ...process.env, MODELS_DIR: cacheDir },
      encoding: 'utf8',
    });
    const row = run.stdout.split('\n').find((line) => line.startsWith('isnet-small '));
    expect(row?.trimEnd()).toMatch(/not found\s+not used$/);
    expect(run.stdout).toMatch(/^model\s+version\s+license\s+size\s+where found\s+status/m);
    expect(run.status).toBe(0);
    // A child process with its own TypeScript loading: seconds on a loaded machine.
  }, 30_000);
});
