import sharp from 'sharp';

/** eu/eu1.jpg's rear plate, in its pixels. */
const EU1_PLATE = { left: 396, top: 340, width: 203, height: 46 };

/**
 * eu/eu1.jpg with its rear plate pixelated past reading (45x10 blocks): still a plate to the eye and to the
 * detector's whole-photo pass, but nothing either signal confirms. At 51x12 the text signal still reads
 * "M5-XSX" and the plate is hidden, as it should be.
 */
export async function eu1WithPixelatedPlate(eu1: Buffer): Promise<Buffer> {
  const small = await sharp(eu1).extract(EU1_PLATE).resize(45, 10).toBuffer();
  const coarse = await sharp(small)
    .resize(EU1_PLATE.width, EU1_PLATE.height, { kernel: 'nearest' })
    .toBuffer();
  return sharp(eu1)
    .composite([{ input: coarse, left: EU1_PLATE.left, top: EU1_PLATE.top }])
    .jpeg()
    .toBuffer();
}
