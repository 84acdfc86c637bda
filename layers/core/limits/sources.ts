import { GB, MB } from '../units.ts';

/**
 * How many bytes a photo or an archive may have, by the way it arrives. These are the defaults: an
 * operator may change each in layers/config.ts (`MAX_SOURCE_BYTES`, `MAX_PHOTO_BYTES`,
 * `MAX_ARCHIVE_BYTES`), and the documents quote these.
 */

/** A photo at `url`, or a file part of a form (in practice capped lower by the inline body limit). */
export const MAX_SOURCE_BYTES = 20 * MB;

/** A photo by direct upload (POST /uploads), and a photo inside a batch archive. */
export const MAX_PHOTO_BYTES = 40 * MB;

/** A batch archive by direct upload. */
export const MAX_ARCHIVE_BYTES = 2 * GB;
