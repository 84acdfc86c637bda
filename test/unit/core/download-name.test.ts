import { describe, expect, it } from 'vitest';
import { downloadName } from '#core/use-cases/download-batch.ts';

describe('the name a batch download is saved under', () => {
  it('is the archive’s own name with -results, not the batch id', () => {
    expect(downloadName({ id: 'bat_1', archive: { name: 'three-cars.zip', bytes: 1 } })).toBe(
      'three-cars-results.zip',
    );
    expect(downloadName({ id: 'bat_1', archive: { name: 'Lot 7 "Ford".ZIP', bytes: 1 } })).toBe(
      'Lot-7-Ford-results.zip',
    );
    expect(downloadName({ id: 'bat_1', archive: { name: null, bytes: 1 } })).toBe('bat_1-results.zip');
  });
});
