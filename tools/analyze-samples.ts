/**
 * The labelled photos the analyze head is fitted and evaluated on, by source, each seen through the
 * operation's own `observe` (so a photo's features are what a job would compute), cached on disk in
 * .cache/analyze-samples because observing is the slow part.
 *
 * Sources (../shared/eval, see its README):
 * - `listing`: photos.csv, small marketplace photos with photo type and view; group = car model.
 * - `street`: plates/{eu,us,br}, street and dealer-lot photos, all exterior; the source labels no view,
 *   so ours are in test/eval/street-views.csv (198 photos; mostly front and rear); group = the photo.
 * - `podium`: the listing exteriors cut out by the project's own segmenter (ISNet) and composited onto
 *   one of the four rendered backdrops (every other
 *   listing exterior, backdrops in turn) (layers/vision/backdrops.ts) with their floor shadow, by the
 *   `background` operation's own `replaceBackground`; photo type podium, view of the source photo;
 *   group = the car model of the source photo, so a car and its composites share a fold.
 *
 * - `turntable`: extra/turntable.csv, 14 cars on a show turntable (podium), the view computed from the
 *   rotation angle; group = the car. Only the view layer learns from them (tools/fit-analyze-head.ts).
 *
 * Augmentations, each also seen mirrored (left/right labels swapped) by `observe`:
 * - `orig`: the photo as it is;
 * - `crop`: a random crop keeping 45-85% of the area, then, on photos over 400 px, scaled down to
 *   50-100%: framing and size as users send them;
 * - `closeup`: a window of 45-70% of the main car box's width and height around a random point of the
 *   box (the whole photo's centre when no car was found): the car fills and overflows the frame, as on
 *   front and rear close-ups.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import { BACKGROUND_PRESETS, type BackgroundPreset } from '#core/jobs/job.ts';
import { decodeSource } from '#vision/image-io.ts';
import { featureStrength, mainPlate, mainVehicle } from '#vision/math/features.ts';
import type { Box } from '#vision/math/geometry.ts';
import type { Matte } from '#vision/math/matte.ts';
import { VIEWS, type View } from '#vision/math/vocabulary.ts';
import type { ModelCache } from '#vision/models.ts';
import {
  ANALYSIS_SIDE,
  type AnalyzeModels,
  analyzeModels,
  decodeForAnalysis,
  observe,
} from '#vision/operations/analyze.ts';
import { replaceBackground } from '#vision/operations/background.ts';
import { isnetSegmenter } from '#vision/segmenter.ts';

const SOURCES = ['listing', 'street', 'podium', 'turntable'] as const;
type Source = (typeof SOURCES)[number];
const AUGMENTATIONS = ['orig', 'crop', 'closeup'] as const;
export type Augmentation = (typeof AUGMENTATIONS)[number];
export type LabelledType = 'exterior' | 'interior' | 'podium';

export interface Photo {
  readonly source: Source;
  /** Relative to the eval directory; for `podium`, the listing photo it was cut from. */
  readonly file: string;
  readonly photoType: LabelledType;
  readonly view: View | null;
  readonly group: string;
  readonly backdrop?: BackgroundPreset;
  /** `turntable` only: the car's rotation, 0 = front, 90 = left side seen (extra/README.md). */
  readonly angle?: number;
}

export interface Sample {
  readonly id: string;
  readonly photo: Photo;
  readonly augmentation: Augmentation;
  readonly features: Float32Array;
  readonly mirroredFeatures: Float32Array;
  readonly vehicleFound: boolean;
  readonly plateFound: boolean;
  /** `featureStrength` of the photo and its mirror, the smaller. */
  readonly strength: number;
}

/**
 * The view of the street photos a person would give without hesitating, labelled by eye from contact
 * sheets (198 of 223; left out: plate close-ups, cars cut by the frame or hidden behind another, a
 * trailer, angles between two views). Not the source's labels: ours, like test/eval/plates-other.csv.
 */
const STREET_VIEWS = path.resolve(import.meta.dirname, '..', 'test', 'eval', 'street-views.csv');

/** Bump when observing, augmenting or compositing changes: the cache is keyed by it. */
const CACHE_VERSION = 'samples-3';

export async function readPhotos(evalDir: string): Promise<Photo[]> {
  const listing = (await readFile(path.join(evalDir, 'photos.csv'), 'utf8'))
    .trim()
    .split('\n')
    .slice(1)
    .map((line): Photo => {
      const [file, photoType, view] = line.split(',');
      return {
        source: 'listing',
        file: file!,
        photoType: photoType as LabelledType,
        view: view ? (view as View) : null,
        group: /\)([^/]+?)__/.exec(file!)?.[1] ?? file!,
      };
    });
  const streetViews = new Map(
    (await readFile(STREET_VIEWS, 'utf8'))
      .trim()
      .split('\n')
      .slice(1)
      .map((line) => {
        const [file, view] = line.split(',') as [string, View];
        if (!VIEWS.includes(view)) throw new Error(`${STREET_VIEWS}: unknown view ${view} for ${file}`);
        return [file, view];
      }),
  );
  const street = (await readFile(path.join(evalDir, 'plates.csv'), 'utf8'))
    .trim()
    .split('\n')
    .slice(1)
    .map((line): Photo => {
      const file = line.split(',')[0]!;
      return {
        source: 'street',
        file,
        photoType: 'exterior',
        view: streetViews.get(file) ?? null,
        group: file,
      };
    });
  // Every other listing exterior (12 or 13 per view; ISNet on a shared 2-core machine sets the number) on
  // one of the four backdrops, in turn, so each backdrop gets a quarter of every view.
  const podium = listing
    .filter((p) => p.photoType === 'exterior')
    .map(
      (p, i): Photo => ({
        ...p,
        source: 'podium',
        photoType: 'podium',
        backdrop: BACKGROUND_PRESETS[i % BACKGROUND_PRESETS.length]!,
      }),
    )
    .filter((_, i) => i % 2 === 0);
  return [...listing, ...street, ...podium];
}

/**
 * What each photo is seen as. Composites and turntable frames only as they are (a crop of a rendered backdrop teaches little
 * and the observing time is better spent on real photos); interiors have no car box to close up on.
 */
function augmentationsOf(photo: Photo): readonly Augmentation[] {
  if (photo.source === 'podium' || photo.source === 'turntable') return ['orig'];
  if (photo.photoType === 'interior') return ['orig', 'crop'];
  return AUGMENTATIONS;
}

const sampleId = (photo: Photo, augmentation: Augmentation) =>
  `${photo.source}:${photo.file}${photo.backdrop ? `@${photo.backdrop}` : ''}#${augmentation}`;

/** A small seeded generator, so that every sample and fold is the same on every run. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const seedOf = (id: string) => createHash('sha256').update(id).digest().readUInt32LE(0);

/** The crop window of an augmentation, in the photo's pixels, and the scale applied after it. */
export function augmentWindow(
  augmentation: Exclude<Augmentation, 'orig'>,
  size: { width: number; height: number },
  car: Box | undefined,
  random: () => number,
): { box: Box; scale: number } {
  const { width: W, height: H } = size;
  const clamp = (b: Box): Box => {
    const w = Math.max(16, Math.min(W, Math.round(b.w)));
    const h = Math.max(16, Math.min(H, Math.round(b.h)));
    const x = Math.min(W - w, Math.max(0, Math.round(b.x)));
    const y = Math.min(H - h, Math.max(0, Math.round(b.y)));
    return { x, y, w, h };
  };
  if (augmentation === 'crop') {
    const area = 0.45 + 0.4 * random();
    const aspect = 0.85 + 0.3 * random();
    const w = W * Math.sqrt(area * aspect);
    const h = H * Math.sqrt(area / aspect);
    const box = clamp({ x: random() * (W - w), y: random() * (H - h), w, h });
    const scale = Math.max(W, H) > 400 ? 0.5 + 0.5 * random() : 1;
    return { box, scale };
  }
  const ref = car ?? { x: 0, y: 0, w: W, h: H };
  const w = ref.w * (0.45 + 0.25 * random());
  const h = ref.h * (0.45 + 0.25 * random());
  const cx = ref.x + ref.w * (0.2 + 0.6 * random());
  const cy = ref.y + ref.h * (0.3 + 0.4 * random());
  return { box: clamp({ x: cx - w / 2, y: cy - h / 2, w, h }), scale: 1 };
}

interface CacheEntry {
  readonly vehicleFound: boolean;
  readonly plateFound: boolean;
  readonly strength: number;
  readonly car?: Box;
}

/**
 * Observes every photo under every augmentation, reading what the cache already holds. Progress goes
 * to `log`; the cache is written as it goes, so an interrupted run resumes.
 */
export async function observeSamples(
  evalDir: string,
  photos: readonly Photo[],
  models: ModelCache,
  options: { cacheDir: string; log?: (line: string) => void },
): Promise<Sample[]> {
  const { cacheDir, log = () => {} } = options;
  await mkdir(cacheDir, { recursive: true });
  let deps: AnalyzeModels | undefined;
  const samples: Sample[] = [];
  const composites = new Map<string, Buffer | Matte>();
  let fresh = 0;
  const started = performance.now();
  for (const photo of photos) {
    let car: Box | undefined;
    let origShrunk = false;
    for (const augmentation of augmentationsOf(photo)) {
      const id = sampleId(photo, augmentation);
      // Sizes from headers and crop windows only: a cached sample costs no decode, a composite no ISNet
      // (it is as large as its listing photo).
      const original = await orientedSize(await readFile(path.join(evalDir, photo.file)));
      const window =
        augmentation === 'orig'
          ? undefined
          : augmentWindow(augmentation, original, car, mulberry32(seedOf(id)));
      const seenSize = window
        ? { width: Math.max(16, Math.round(window.box.w * window.scale)), height: 0, png: false }
        : original;
      if (window) seenSize.height = Math.round((window.box.h * seenSize.width) / window.box.w);
      const shrunk = shrinksForAnalysis(seenSize);
      if (augmentation === 'orig') origShrunk = shrunk;
      // A photo decoded whole is seen as before the shrink-on-load decode, so its entry stays valid; a
      // close-up's window comes from the car box of the photo's own decode.
      const tag = shrunk || (augmentation === 'closeup' && origShrunk);
      const key = createHash('sha256')
        .update(`${CACHE_VERSION}\n${id}${tag ? `\nside ${ANALYSIS_SIDE}` : ''}`)
        .digest('hex')
        .slice(0, 24);
      const bin = path.join(cacheDir, `${key}.f32`);
      const meta = path.join(cacheDir, `${key}.json`);
      let entry: CacheEntry;
      let features: Float32Array;
      let mirroredFeatures: Float32Array;
      if (existsSync(bin) && existsSync(meta)) {
        entry = JSON.parse(await readFile(meta, 'utf8')) as CacheEntry;
        const raw = await readFile(bin);
        const all = new Float32Array(raw.buffer, raw.byteOffset, raw.byteLength / 4);
        features = all.slice(0, all.length / 2);
        mirroredFeatures = all.slice(all.length / 2);
      } else {
        deps ??= await analyzeModels(models);
        let bytes = await sourceBytes(evalDir, photo, models, composites);
        if (window) bytes = await cropped(bytes, window);
        const decoded = await decodeForAnalysis(bytes);
        const { width, height } = (await sharp(bytes).metadata()).autoOrient;
        if (shrunk !== decoded.width < width) {
          throw new Error(`${id}: ${width}x${height} decoded at ${decoded.width}x${decoded.height}`);
        }
        const seen = await observe(deps, decoded);
        const vehicle = mainVehicle(seen.evidence.objects);
        // The close-up window is cut from the photo's own pixels.
        const k = width / decoded.width;
        entry = {
          vehicleFound: vehicle !== undefined,
          plateFound: mainPlate(seen.evidence) !== undefined,
          strength: Math.min(featureStrength(seen.features), featureStrength(seen.mirroredFeatures)),
          ...(vehicle
            ? {
                car: {
                  x: vehicle.box.x * k,
                  y: vehicle.box.y * k,
                  w: vehicle.box.w * k,
                  h: vehicle.box.h * k,
                },
              }
            : {}),
        };
        features = seen.features;
        mirroredFeatures = seen.mirroredFeatures;
        const all = new Float32Array(features.length * 2);
        all.set(features);
        all.set(mirroredFeatures, features.length);
        await writeFile(bin, Buffer.from(all.buffer));
        await writeFile(meta, JSON.stringify(entry));
        fresh++;
        if (fresh % 25 === 0) {
          const seconds = (performance.now() - started) / 1000;
          log(`observed ${fresh} new samples (${samples.length} in all) in ${seconds.toFixed(0)} s`);
        }
      }
      if (augmentation === 'orig') car = entry.car;
      samples.push({
        id,
        photo,
        augmentation,
        features,
        mirroredFeatures,
        vehicleFound: entry.vehicleFound,
        plateFound: entry.plateFound,
        strength: entry.strength,
      });
    }
  }
  return samples;
}

/** A crop or close-up of a photo, as a JPEG. */
async function cropped(original: Buffer, { box, scale }: { box: Box; scale: number }): Promise<Buffer> {
  // Upright first: the crop window is in the pixels the operation sees (EXIF orientation applied).
  const upright = await sharp(original).rotate().toBuffer();
  let pipeline = sharp(upright).extract({ left: box.x, top: box.y, width: box.w, height: box.h });
  if (scale < 1) pipeline = pipeline.resize(Math.max(16, Math.round(box.w * scale)));
  return pipeline.jpeg({ quality: 90 }).toBuffer();
}

async function orientedSize(bytes: Buffer): Promise<{ width: number; height: number; png: boolean }> {
  const meta = await sharp(bytes).metadata();
  return { ...meta.autoOrient, png: meta.format === 'png' };
}

/**
 * Whether `decodeForAnalysis` decodes a photo of this size below its own size: a JPEG or WEBP whose half
 * still has ANALYSIS_SIDE on its longest side (`openSource`'s rule; checked on every fresh observation).
 */
const shrinksForAnalysis = (size: { width: number; height: number; png: boolean }) =>
  !size.png && Math.ceil(Math.max(size.width, size.height) / 2) >= ANALYSIS_SIDE;

/**
 * The photo's bytes; for `podium`, the listing photo cut out by ISNet and put on its backdrop by
 * `replaceBackground` (segmented once per photo, composited onto each of its backdrops).
 */
async function sourceBytes(
  evalDir: string,
  photo: Photo,
  models: ModelCache,
  composites: Map<string, Buffer | Matte>,
): Promise<Buffer> {
  const original = await readFile(path.join(evalDir, photo.file));
  if (photo.source !== 'podium') return original;
  const cached = composites.get(`${photo.file}@${photo.backdrop}`);
  if (cached) return cached as Buffer;
  const isnet = await isnetSegmenter(models);
  let matte = composites.get(photo.file) as Matte | undefined;
  if (!matte) {
    matte = await isnet.segment(await decodeSource(original));
    composites.clear();
    composites.set(photo.file, matte);
  }
  const once = {
    modelVersion: isnet.modelVersion,
    segment: async () => matte,
    modelMatte: async () => matte,
    toPhotoSize: async () => matte,
  };
  const result = await replaceBackground(
    { segmenter: once },
    original,
    { background: photo.backdrop!, plateColor: '#000000', plateSmoothing: true, plateMaskOnly: false },
    null,
  );
  composites.set(`${photo.file}@${photo.backdrop}`, result.image);
  return result.image;
}
