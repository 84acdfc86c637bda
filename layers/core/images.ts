/** Source formats the service accepts (spec 8), recognised by their magic bytes, never by name or header. */
export type ImageType = 'image/jpeg' | 'image/png' | 'image/webp';

export function sniffImageType(bytes: Uint8Array): ImageType | null {
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'image/jpeg';
  if (
    bytes.length >= 8 &&
    bytes[0] === 0x89 &&
    bytes[1] === 0x50 &&
    bytes[2] === 0x4e &&
    bytes[3] === 0x47 &&
    bytes[4] === 0x0d &&
    bytes[5] === 0x0a &&
    bytes[6] === 0x1a &&
    bytes[7] === 0x0a
  ) {
    return 'image/png';
  }
  const ascii = (from: number, to: number) => String.fromCharCode(...bytes.subarray(from, to));
  if (bytes.length >= 12 && ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WEBP') return 'image/webp';
  return null;
}

export const extensionOf = (type: ImageType): string =>
  type === 'image/jpeg' ? 'jpg' : type === 'image/png' ? 'png' : 'webp';

export interface ImageHeader {
  type: ImageType;
  width: number;
  height: number;
  /** 1 for a still image; the frame count of an animated PNG or WEBP. */
  frames: number;
}

/**
 * Size and frame count from the image's own header, without decoding a pixel, so that limits are applied
 * before a job is stored, queued or charged. `null` when the bytes are not one of the accepted formats or
 * the header is cut short or damaged.
 */
export function readImageHeader(bytes: Uint8Array): ImageHeader | null {
  const type = sniffImageType(bytes);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const size =
    type === 'image/jpeg'
      ? jpegSize(bytes, view)
      : type === 'image/png'
        ? pngSize(bytes, view)
        : type === 'image/webp'
          ? webpSize(bytes, view)
          : null;
  if (!type || !size || size.width < 1 || size.height < 1) return null;
  return { type, ...size };
}

type Size = { width: number; height: number; frames: number };

const fourCC = (bytes: Uint8Array, at: number) => String.fromCharCode(...bytes.subarray(at, at + 4));

/** Markers up to the first start-of-frame, whose header holds the size; a scan before it is damage. */
function jpegSize(bytes: Uint8Array, view: DataView): Size | null {
  let at = 2;
  while (at + 4 <= bytes.length) {
    if (bytes[at] !== 0xff) return null;
    const marker = bytes[at + 1]!;
    if (marker === 0xff) {
      at += 1;
      continue;
    }
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      at += 2;
      continue;
    }
    if (marker === 0xda || marker === 0xd9) return null;
    const length = view.getUint16(at + 2);
    if (length < 2) return null;
    const isFrame = marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
    if (isFrame) {
      if (at + 9 > bytes.length) return null;
      return { height: view.getUint16(at + 5), width: view.getUint16(at + 7), frames: 1 };
    }
    at += 2 + length;
  }
  return null;
}

/** IHDR for the size; an `acTL` chunk before the image data makes it an animated PNG with that many frames. */
function pngSize(bytes: Uint8Array, view: DataView): Size | null {
  if (bytes.length < 24 || fourCC(bytes, 12) !== 'IHDR') return null;
  const width = view.getUint32(16);
  const height = view.getUint32(20);
  let frames = 1;
  for (let at = 8; at + 8 <= bytes.length; ) {
    const length = view.getUint32(at);
    const chunk = fourCC(bytes, at + 4);
    if (chunk === 'IDAT' || chunk === 'IEND') break;
    if (chunk === 'acTL' && at + 12 <= bytes.length) frames = Math.max(1, view.getUint32(at + 8));
    at += 12 + length;
  }
  return { width, height, frames };
}

/** The first chunk: lossy (`VP8 `), lossless (`VP8L`) or extended (`VP8X`, whose flags say animated). */
function webpSize(bytes: Uint8Array, view: DataView): Size | null {
  if (bytes.length < 30) return null;
  const chunk = fourCC(bytes, 12);
  const data = 20;
  if (chunk === 'VP8 ') {
    if (bytes[data + 3] !== 0x9d || bytes[data + 4] !== 0x01 || bytes[data + 5] !== 0x2a) return null;
    return {
      width: view.getUint16(data + 6, true) & 0x3fff,
      height: view.getUint16(data + 8, true) & 0x3fff,
      frames: 1,
    };
  }
  if (chunk === 'VP8L') {
    if (bytes[data] !== 0x2f) return null;
    const bits = view.getUint32(data + 1, true);
    return { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1, frames: 1 };
  }
  if (chunk === 'VP8X') {
    const animated = (bytes[data]! & 0x02) !== 0;
    const width = 1 + (bytes[data + 4]! | (bytes[data + 5]! << 8) | (bytes[data + 6]! << 16));
    const height = 1 + (bytes[data + 7]! | (bytes[data + 8]! << 8) | (bytes[data + 9]! << 16));
    let frames = 0;
    if (animated) {
      for (let at = 12; at + 8 <= bytes.length; ) {
        if (fourCC(bytes, at) === 'ANMF') frames += 1;
        const length = view.getUint32(at + 4, true);
        at += 8 + length + (length & 1);
      }
    }
    return { width, height, frames: Math.max(frames, animated ? 2 : 1) };
  }
  return null;
}
