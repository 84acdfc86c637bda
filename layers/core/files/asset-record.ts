import type { ImageType } from '../images.ts';

/** A reusable source image (spec 2.5). */
export interface Asset {
  id: string;
  ownerId: string;
  /** The File that lists this asset among its owner's files (spec 2.6). */
  fileId: number;
  /** Storage key of the bytes, under `assets/<id>/`. */
  key: string;
  originalName: string;
  contentType: ImageType;
  bytes: number;
  sha256: string;
  createdAt: string;
  expiresAt: string;
}
