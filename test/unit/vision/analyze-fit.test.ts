import { describe, expect, it } from 'vitest';
import {
  chooseThresholds,
  type EvalPhoto,
  fitSoftmax,
  groupFolds,
  labelOf,
  predictSoftmax,
  type Sample,
} from '#tools/fit-analyze-head.ts';
import { HEAD_CLASSES } from '#vision/math/vocabulary.ts';

describe('groupFolds', () => {
  const groups = ['a', 'a', 'a', 'a', 'b', 'b', 'c', 'd', 'd', 'e', 'f', 'f', 'g'];

  it('keeps each group in one fold, balances the folds and depends only on the seed', () => {
    const folds = groupFolds(groups, 3, 7);
    expect([...folds.keys()].sort()).toEqual(['a', 'b', 'c', 'd', 'e', 'f', 'g']);
    const load = [0, 0, 0];
    for (const g of groups) load[folds.get(g)!]! += 1;
    expect(Math.max(...load) - Math.min(...load)).toBeLessThanOrEqual(1);
    expect(groupFolds(groups, 3, 7)).toEqual(folds);
  });
});

describe('labelOf', () => {
  it('swaps left and right for the mirror image', () => {
    const photo: EvalPhoto = { file: 'x', photoType: 'exterior', view: 'three_quarters_left', group: 'g' };
    expect(HEAD_CLASSES[labelOf(photo, false)]).toBe('three_quarters_left');
    expect(HEAD_CLASSES[labelOf(photo, true)]).toBe('three_quarters_right');
    expect(labelOf({ ...photo, photoType: 'interior', view: null }, true)).toBe(0);
  });
});

describe('fitSoftmax', () => {
  it('separates three clusters and is deterministic', () => {
    const centres = [
      [5, 0],
      [0, 5],
      [-5, -5],
    ];
    const rows: number[][] = [];
    const labels: number[] = [];
    centres.forEach((c, k) => {
      for (let i = 0; i < 20; i++) {
        rows.push([c[0]! + Math.sin(i * 7 + k), c[1]! + Math.cos(i * 3 + k)]);
        labels.push(k);
      }
    });
    const model = fitSoftmax(rows, labels, 3, { lambda: 0.01, maxIterations: 200 });
    const right = rows.filter((r, i) => {
      const p = predictSoftmax(model, r);
      return p.indexOf(Math.max(...p)) === labels[i];
    }).length;
    expect(right).toBe(rows.length);
    const again = fitSoftmax(rows, labels, 3, { lambda: 0.01, maxIterations: 200 });
    expect([...again.weights[0]!]).toEqual([...model.weights[0]!]);
  });

  it('shrinks the weights as the L2 penalty grows', () => {
    const rows = [[1], [2], [-1], [-2]];
    const labels = [0, 0, 1, 1];
    const loose = fitSoftmax(rows, labels, 2, { lambda: 0.01, maxIterations: 200 });
    const tight = fitSoftmax(rows, labels, 2, { lambda: 10, maxIterations: 200 });
    expect(Math.abs(tight.weights[0]![0]!)).toBeLessThan(Math.abs(loose.weights[0]![0]!));
  });
});

describe('chooseThresholds', () => {
  it('takes the 1% quantile of held-out type confidence and 90% of the weakest interior', () => {
    const samples = Array.from({ length: 200 }, (_, i) => ({
      label: i % 2 === 0 ? 0 : 1,
      strength: 20 + (i % 7),
    })) as unknown as Sample[];
    // Type confidence 0.5 + i / 400 for photo i: the third lowest (index 2 of 200) is 0.505.
    const held = samples.map((_, i) => [0.5 + i / 400]);
    expect(chooseThresholds(held, samples)).toEqual({ minTypeConfidence: 0.5, minInteriorStrength: 18 });
  });
});
