import { describe, expect, it } from 'vitest';
import { BadRequestError } from '#core/errors.ts';
import { parseJobRequest } from '#core/jobs/input.ts';
import { normalizePlateColor, parseBooleanish, resolveParams } from '#core/jobs/params.ts';

const file = { bytes: Buffer.from('x'), filename: 'car.jpg', contentType: 'image/jpeg' };

describe('job parameters', () => {
  it.each([
    ['#AABBCC', '#aabbcc'],
    ['black', '#000000'],
    ['white', '#ffffff'],
    ['graphite', '#141414'],
  ])('reads plate_color %s as %s', (raw, expected) => {
    expect(normalizePlateColor(raw)).toBe(expected);
  });

  it.each(['#abc', 'red', '#gggggg', '141414'])('refuses plate_color %s', (raw) => {
    expect(() => normalizePlateColor(raw)).toThrow(BadRequestError);
  });

  it.each([
    ['true', true],
    ['1', true],
    ['smooth', true],
    ['false', false],
    ['0', false],
    ['raw', false],
  ])('reads plate_smoothing %s as %s', (raw, expected) => {
    expect(parseBooleanish('plate_smoothing', raw)).toBe(expected);
  });

  it('prefers the request, then the key, then the service default', () => {
    const keyDefaults = {
      plateColor: '#ffffff',
      plateSmoothing: false,
      webhookUrl: 'https://hooks.example/k',
    };
    expect(resolveParams({}, {})).toMatchObject({
      plateColor: '#141414',
      plateSmoothing: true,
      plateMaskOnly: false,
    });
    expect(resolveParams({}, keyDefaults)).toMatchObject({ plateColor: '#ffffff', plateSmoothing: false });
    expect(resolveParams({ plateColor: '#000000', plateSmoothing: true }, keyDefaults)).toMatchObject({
      plateColor: '#000000',
      plateSmoothing: true,
      webhookUrl: 'https://hooks.example/k',
    });
  });

  it("uses the key's stored background file unless the request names a preset or sends a file", () => {
    const defaults = { backgroundFileKey: 'assets/k/bg.jpg', background: 'warm' as const };
    expect(resolveParams({}, defaults).backgroundFileKey).toBe('assets/k/bg.jpg');
    expect(resolveParams({ background: 'graphite' }, defaults)).toMatchObject({
      backgroundFileKey: null,
      background: 'graphite',
    });
    expect(resolveParams({ backgroundFileKey: 'sources/j/bg.png' }, defaults).backgroundFileKey).toBe(
      'sources/j/bg.png',
    );
  });
});

describe('job input', () => {
  it('defaults mode to plate', () => {
    expect(parseJobRequest({}, { file }).operation).toBe('plate');
  });

  it('treats empty form fields as not sent', () => {
    const request = parseJobRequest({ plate_color: '', mode: 'plate' }, { file });
    expect(request.requested.plateColor).toBeUndefined();
  });

  it('needs exactly one source', () => {
    expect(() => parseJobRequest({}, {})).toThrow(/file, url, asset_id or upload_id/);
    expect(() => parseJobRequest({ url: 'https://example.com/a.jpg' }, { file })).toThrow(/exactly one/);
    expect(() => parseJobRequest({ upload_id: 'upl_x' }, { file })).toThrow(/exactly one/);
    expect(parseJobRequest({ upload_id: 'upl_x' }, {}).source).toEqual({ kind: 'upload', uploadId: 'upl_x' });
  });

  it('names the field that is wrong', () => {
    expect(() => parseJobRequest({ mode: 'blur' }, { file })).toThrow(/^mode: /);
    expect(() => parseJobRequest({ url: 'ftp://example.com/a.jpg' }, {})).toThrow(/^url: /);
  });

  it('limits the legacy /process route to its two modes', () => {
    expect(() => parseJobRequest({ mode: 'analyze' }, { file }, ['plate', 'studio_background'])).toThrow(
      BadRequestError,
    );
  });

  it('takes require_plate for the modes that hide plates, and names them for the rest', () => {
    const studio = parseJobRequest({ mode: 'studio_background', require_plate: 'true' }, { file });
    expect(resolveParams(studio.requested, {}).requirePlate).toBe(true);
    expect(resolveParams(parseJobRequest({}, { file }).requested, {}).requirePlate).toBeUndefined();
    expect(() => parseJobRequest({ mode: 'background', require_plate: '1' }, { file })).toThrow(
      /require_plate applies to plate and studio_background; background hides no plate/,
    );
  });
});

describe('image options of a job', () => {
  const file = { bytes: Buffer.from([0xff, 0xd8, 0xff]), filename: null, contentType: null };

  it('reads format, max_width (form text), framing and shadow into the request', () => {
    const request = parseJobRequest(
      {
        mode: 'studio_background',
        background: 'transparent',
        format: 'webp',
        max_width: '800',
        framing: 'keep',
        shadow: 'yes',
      },
      { file },
    );
    expect(request.requested).toMatchObject({
      background: 'transparent',
      format: 'webp',
      maxWidth: 800,
      framing: 'keep',
      shadow: true,
    });
  });

  it('refuses JPEG with transparency, a width out of range or not whole, an unknown format or framing', () => {
    const bad = (fields: Record<string, unknown>) => () =>
      parseJobRequest({ mode: 'background', ...fields }, { file });
    expect(bad({ background: 'transparent', format: 'jpg' })).toThrow(
      /JPEG has no transparency|jpg has no transparency/,
    );
    expect(bad({ max_width: '63' })).toThrow(/max_width/);
    expect(bad({ max_width: 20000 })).toThrow(/max_width/);
    expect(bad({ max_width: '800.5' })).toThrow(/max_width/);
    expect(bad({ format: 'gif' })).toThrow(/format/);
    expect(bad({ framing: 'left' })).toThrow(/framing/);
    expect(bad({ aspect: '5:4' })).toThrow(/aspect/);
    expect(bad({ aspect: '4:3', framing: 'keep' })).toThrow(/aspect: 4:3 shapes the canvas of a centred car/);
  });

  it('takes an aspect as a request to centre the car, unless framing is sent', () => {
    const resolved = (fields: Record<string, unknown>) =>
      resolveParams(parseJobRequest({ mode: 'background', ...fields }, { file }).requested, {});
    expect(resolved({ aspect: '16:9' })).toMatchObject({ framing: 'center', aspect: '16:9' });
    expect(resolved({ aspect: 'keep' })).toMatchObject({ framing: null, aspect: 'keep' });
    expect(resolved({ aspect: 'keep', framing: 'keep' })).toMatchObject({ framing: 'keep', aspect: 'keep' });
    expect(resolved({})).toMatchObject({ framing: null, aspect: null });
  });
});
