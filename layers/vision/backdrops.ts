import sharp, { type OverlayOptions, type Sharp } from 'sharp';
import { SourceImageError } from '#core/errors.ts';
import type { BackgroundPreset } from '#core/jobs/job.ts';
import { MAX_IMAGE_PIXELS } from '#core/limits/image.ts';
import type { ShadowEllipse, ShadowLayer } from '#vision/math/matte.ts';

/** Where the car is in the photo, so the backdrop's floor and light can be laid out around it. */
export interface BackdropLayout {
  readonly width: number;
  readonly height: number;
  /** Row where the floor meets the wall (see `horizonRow`). */
  readonly horizonY: number;
  /** Column of the car's centre: the light falls there. */
  readonly focusX: number;
  /** Row the car stands on: the floor's pool of light sits there. */
  readonly groundY: number;
}

interface Palette {
  /** Wall from top to the horizon; the floor starts from the last, so the cove has no seam. */
  readonly wall: readonly [string, string, string];
  /** Floor a third of the way to the camera, and at the bottom edge. */
  readonly floor: readonly [string, string];
  /** Colour and opacity of the light behind the car and on the floor around it. */
  readonly light: readonly [string, number, number];
  /** Darkness of the cove line where floor meets wall. */
  readonly cove: number;
  readonly vignette: number;
}

const PALETTES: Record<BackgroundPreset, Palette> = {
  // A white cyclorama: the wall lighter towards the car, the floor falling off towards the camera.
  studio: {
    wall: ['#c3c7cc', '#dfe1e4', '#eef0f1'],
    floor: ['#d9dcdf', '#a9aeb4'],
    light: ['#ffffff', 0.55, 0.35],
    cove: 0.07,
    vignette: 0.28,
  },
  // Cream walls and a sand-coloured floor under tungsten light.
  warm: {
    wall: ['#a88c70', '#d6c2aa', '#ecdfcd'],
    floor: ['#d3bea3', '#8f7458'],
    light: ['#fff3e0', 0.5, 0.3],
    cove: 0.08,
    vignette: 0.34,
  },
  // A dark studio: charcoal wall with a soft spot behind the car, a floor lit around it.
  graphite: {
    wall: ['#141619', '#2a2e33', '#40454c'],
    floor: ['#30343a', '#101113'],
    light: ['#c8d0da', 0.22, 0.2],
    cove: 0.2,
    vignette: 0.45,
  },
  // A dealer hall: pale wall with a strip of ceiling light and panel joints, a polished tiled floor.
  showroom: {
    wall: ['#cfd4da', '#e3e7eb', '#f1f3f5'],
    floor: ['#cdd1d6', '#8d949c'],
    light: ['#ffffff', 0.45, 0.35],
    cove: 0.1,
    vignette: 0.3,
  },
};

/** Longest side the SVG is drawn at: gradients and faint joints lose nothing to libvips' linear upscale. */
const RENDER_LONG_SIDE = 1600;

const f = (v: number) => (Math.round(v * 100) / 100).toString();

/**
 * The preset as SVG at `scale` of the layout's size. Everything is relative to the horizon and the car's
 * position: a wall in three stops up to the horizon, a soft cove line there, a floor darkening towards
 * the camera, a light behind the car and a pool of light on the floor, and a vignette.
 */
export function backdropSvg(preset: BackgroundPreset, layout: BackdropLayout, scale = 1): string {
  const p = PALETTES[preset];
  const W = layout.width * scale;
  const H = layout.height * scale;
  const hy = Math.min(H - 1, Math.max(1, layout.horizonY * scale));
  const fx = layout.focusX * scale;
  const gy = Math.min(H, Math.max(hy, layout.groundY * scale));
  const floorDepth = H - hy;
  const cove = Math.max(2, floorDepth * 0.1);
  const [lightColour, wallLight, floorLight] = p.light;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${f(W)}" height="${f(H)}" viewBox="0 0 ${f(W)} ${f(H)}">`,
    '<defs>',
    `<linearGradient id="wall" x1="0" y1="0" x2="0" y2="${f(hy)}" gradientUnits="userSpaceOnUse">`,
    `<stop offset="0" stop-color="${p.wall[0]}"/><stop offset="0.55" stop-color="${p.wall[1]}"/>`,
    `<stop offset="1" stop-color="${p.wall[2]}"/></linearGradient>`,
    // Perspective: the floor's brightness changes fastest near the horizon, as distance does.
    `<linearGradient id="floor" x1="0" y1="${f(hy)}" x2="0" y2="${f(H)}" gradientUnits="userSpaceOnUse">`,
    `<stop offset="0" stop-color="${p.wall[2]}"/><stop offset="0.35" stop-color="${p.floor[0]}"/>`,
    `<stop offset="1" stop-color="${p.floor[1]}"/></linearGradient>`,
    // The curve of a cove: a faint shade just below the horizon, fading out onto the floor.
    `<linearGradient id="cove" x1="0" y1="${f(hy - cove * 0.3)}" x2="0" y2="${f(hy + cove)}" gradientUnits="userSpaceOnUse">`,
    `<stop offset="0" stop-color="#000" stop-opacity="0"/><stop offset="0.3" stop-color="#000" stop-opacity="${p.cove}"/>`,
    '<stop offset="1" stop-color="#000" stop-opacity="0"/></linearGradient>',
    `<radialGradient id="light"><stop offset="0" stop-color="${lightColour}" stop-opacity="1"/>`,
    `<stop offset="1" stop-color="${lightColour}" stop-opacity="0"/></radialGradient>`,
    '<radialGradient id="vignette" cx="0.5" cy="0.45" r="0.75">',
    '<stop offset="0.45" stop-color="#000" stop-opacity="0"/>',
    `<stop offset="1" stop-color="#000" stop-opacity="${p.vignette}"/></radialGradient>`,
  ];
  if (preset === 'showroom') parts.push(...showroomDefs(hy, H));
  parts.push(
    '</defs>',
    `<rect x="0" y="0" width="${f(W)}" height="${f(hy)}" fill="url(#wall)"/>`,
    `<rect x="0" y="${f(hy)}" width="${f(W)}" height="${f(H - hy)}" fill="url(#floor)"/>`,
  );
  if (preset === 'showroom') parts.push(...showroomDetails(W, H, hy, fx));
  parts.push(
    `<rect x="0" y="${f(hy - cove * 0.3)}" width="${f(W)}" height="${f(cove * 1.3)}" fill="url(#cove)"/>`,
    // Light on the wall behind the car, and a pool of it on the floor where the car stands.
    `<ellipse cx="${f(fx)}" cy="${f(hy - 0.12 * H)}" rx="${f(0.55 * W)}" ry="${f(0.42 * H)}" fill="url(#light)" opacity="${wallLight}"/>`,
    `<ellipse cx="${f(fx)}" cy="${f(gy)}" rx="${f(0.6 * W)}" ry="${f(Math.max(cove, 0.6 * (gy - hy) + 0.08 * H))}" fill="url(#light)" opacity="${floorLight}"/>`,
    `<rect x="0" y="0" width="${f(W)}" height="${f(H)}" fill="url(#vignette)"/>`,
    '</svg>',
  );
  return parts.join('');
}

function showroomDefs(hy: number, H: number): string[] {
  // Tile joints fade out towards the horizon, where they would crowd into a grey band.
  return [
    `<linearGradient id="jointfade" x1="0" y1="${f(hy)}" x2="0" y2="${f(H)}" gradientUnits="userSpaceOnUse">`,
    '<stop offset="0" stop-color="#fff" stop-opacity="0"/><stop offset="0.25" stop-color="#fff" stop-opacity="0.6"/>',
    '<stop offset="1" stop-color="#fff" stop-opacity="1"/></linearGradient>',
    `<mask id="joints"><rect x="0" y="${f(hy)}" width="100%" height="${f(H - hy)}" fill="url(#jointfade)"/></mask>`,
    '<linearGradient id="strip" x1="0" y1="0" x2="0" y2="1">',
    '<stop offset="0" stop-color="#fff" stop-opacity="0"/><stop offset="0.5" stop-color="#fff" stop-opacity="0.75"/>',
    '<stop offset="1" stop-color="#fff" stop-opacity="0"/></linearGradient>',
  ];
}

/**
 * Floor tiles in one-point perspective (joints converging on a vanishing point on the horizon behind
 * the car, rows closing up as 1/distance), a soft reflection of the ceiling light on the polished floor,
 * a strip of ceiling light across the wall and faint wall-panel joints.
 */
function showroomDetails(W: number, H: number, hy: number, fx: number): string[] {
  const depth = H - hy;
  const stroke = Math.max(0.6, H / 900);
  const joints: string[] = [];
  // Rows of joints at distances 1, 1.6, 2.2, ... from the camera: y - horizon falls as 1 / distance.
  for (let z = 1; z < 14; z += 0.6) joints.push(`M0 ${f(hy + depth / z)}H${f(W)}`);
  // Columns: tiles about a fifth of the frame wide at the bottom edge, all meeting at (fx, hy).
  const tile = W / 5;
  const reach = Math.ceil((Math.max(fx, W - fx) + depth * 3) / tile);
  for (let k = -reach; k <= reach; k++)
    joints.push(`M${f(fx)} ${f(hy)}L${f(fx + (k + 0.5) * tile * 2.2)} ${f(H)}`);
  const panels: string[] = [];
  for (let x = (fx % (W / 4)) - W / 8; x < W; x += W / 4) panels.push(`M${f(x)} 0V${f(hy)}`);
  return [
    `<path d="${panels.join('')}" stroke="#8a9096" stroke-opacity="0.16" stroke-width="${f(stroke)}"/>`,
    `<rect x="0" y="${f(hy * 0.08)}" width="${f(W)}" height="${f(hy * 0.14)}" fill="url(#strip)"/>`,
    `<g mask="url(#joints)"><path d="${joints.join('')}" stroke="#5d646c" stroke-opacity="0.22" stroke-width="${f(stroke)}" fill="none"/></g>`,
    // The ceiling strip seen in the polished floor: a blurred band just below the horizon.
    `<rect x="0" y="${f(hy + depth * 0.05)}" width="${f(W)}" height="${f(depth * 0.12)}" fill="url(#strip)" opacity="0.35"/>`,
  ];
}

/** What the car is put on: a preset drawn for this photo, or a supplied picture. */
export type BackdropSource =
  | { readonly kind: 'preset'; readonly preset: BackgroundPreset }
  | { readonly kind: 'file'; readonly bytes: Buffer };

/** What is drawn on the floor under the car. */
export interface FloorShadow {
  readonly ambient: ShadowEllipse | null;
  readonly contact: ShadowLayer | null;
}

/**
 * The backdrop at the photo's size as interleaved 8-bit sRGB (3 bytes a pixel), with the car's shadow
 * drawn on it. A supplied picture is EXIF-oriented and scaled to cover the frame, centred; its metadata
 * goes no further than this buffer.
 */
export async function renderBackdrop(
  source: BackdropSource,
  layout: BackdropLayout,
  shadow: FloorShadow,
): Promise<Buffer> {
  const { width, height } = layout;
  let base: Sharp;
  if (source.kind === 'preset') {
    const scale = Math.min(1, RENDER_LONG_SIDE / Math.max(width, height));
    // Drawn to pixels first: resizing straight from the SVG makes libvips redraw it per tile, several times
    // slower. Linear is enough for gradients and faster than cubic.
    const drawn = await sharp(Buffer.from(backdropSvg(source.preset, layout, scale)))
      .flatten()
      .raw()
      .toBuffer({ resolveWithObject: true });
    base = sharp(drawn.data, { raw: drawn.info }).resize(width, height, { fit: 'fill', kernel: 'linear' });
  } else {
    base = sharp(source.bytes, { autoOrient: true, limitInputPixels: MAX_IMAGE_PIXELS })
      .flatten({ background: '#ffffff' })
      .resize(width, height, { fit: 'cover', position: 'centre' });
  }
  const overlays = shadowOverlays(shadow, layout);
  if (overlays.length > 0) base = base.composite(overlays);
  try {
    const { data, info } = await base
      .toColourspace('srgb')
      .removeAlpha()
      .raw({ depth: 'uchar' })
      .toBuffer({ resolveWithObject: true });
    if (info.channels !== 3 || info.width !== width || info.height !== height) {
      throw new Error(`the backdrop came out ${info.width}x${info.height}x${info.channels}`);
    }
    return data;
  } catch (error) {
    if (source.kind === 'file') {
      throw new SourceImageError('The background file could not be decoded', { cause: error });
    }
    throw error;
  }
}

/**
 * The floor shadow alone, as darkness (0..255) at the photo's size: what a transparent result carries
 * under the car when its shadow is asked for. The same ellipse and contact layer `renderBackdrop` draws.
 */
export async function renderShadow(
  layout: { width: number; height: number },
  shadow: FloorShadow,
): Promise<Uint8Array> {
  const { width, height } = layout;
  const overlays = shadowOverlays(shadow, layout);
  const canvas = sharp({
    create: { width, height, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 0 } },
  });
  const { data } = await (overlays.length > 0
    ? sharp(await canvas.composite(overlays).png().toBuffer())
    : canvas
  )
    .extractChannel(3)
    .raw()
    .toBuffer({ resolveWithObject: true });
  return new Uint8Array(data.buffer, data.byteOffset, data.length);
}

/** The shadow's layers to composite, the ambient ellipse under the contact shadow; none where it has none. */
function shadowOverlays(shadow: FloorShadow, frame: { width: number; height: number }): OverlayOptions[] {
  return [
    shadow.ambient ? ellipseOverlay(shadow.ambient, frame) : null,
    shadow.contact ? layerOverlay(shadow.contact) : null,
  ].filter((o): o is OverlayOptions => o !== null);
}

/**
 * An elliptical shadow as an SVG radial gradient covering only its box (clipped to the frame), composited
 * at its offset: a 12 MP photo never gets a full-size shadow layer.
 */
function ellipseOverlay(
  s: ShadowEllipse,
  { width, height }: { width: number; height: number },
): OverlayOptions | null {
  const left = Math.max(0, Math.floor(s.cx - s.rx));
  const top = Math.max(0, Math.floor(s.cy - s.ry));
  const right = Math.min(width, Math.ceil(s.cx + s.rx));
  const bottom = Math.min(height, Math.ceil(s.cy + s.ry));
  if (right - left < 1 || bottom - top < 1) return null;
  const svg =
    `<svg xmlns="http://www.w3.org/2000/svg" width="${right - left}" height="${bottom - top}">` +
    `<radialGradient id="s"><stop offset="0" stop-opacity="${f(s.opacity)}"/>` +
    `<stop offset="0.4" stop-opacity="${f(s.opacity * 0.55)}"/><stop offset="1" stop-opacity="0"/></radialGradient>` +
    `<ellipse cx="${f(s.cx - left)}" cy="${f(s.cy - top)}" rx="${f(s.rx)}" ry="${f(s.ry)}" fill="url(#s)"/></svg>`;
  return { input: Buffer.from(svg), left, top };
}

/** A raster of darkness as black with that alpha. */
function layerOverlay(layer: ShadowLayer): OverlayOptions {
  const rgba = Buffer.alloc(layer.width * layer.height * 4);
  for (let i = 0; i < layer.alpha.length; i++) rgba[i * 4 + 3] = layer.alpha[i]!;
  return {
    input: rgba,
    raw: { width: layer.width, height: layer.height, channels: 4 },
    left: layer.left,
    top: layer.top,
  };
}
