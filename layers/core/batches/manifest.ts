import { storageKeys } from '../storage-layout.ts';
import { type Batch, type BatchItem, batchCounts, isFinished, itemStatusOf } from './batch.ts';

export const MANIFEST_NAME = 'manifest.json';

/** One result file of an item as it is named in the download archive. */
export interface ArchivedOutput {
  item: number;
  /** Key of the stored result. */
  key: string;
  /** Path in the archive. */
  name: string;
}

/**
 * Where each succeeded item's results go in the download: the photo's own path with the result's
 * extension (`front/car1.jpg` → `front/car1.jpg`, a PNG result `front/car1.png`), further files of the
 * same item after it (`front/car1.plate_mask.png`). Two names that would meet (case-insensitively, as
 * on the file systems people unpack onto) get `-2`, `-3`, ... before the extension.
 */
export function archivedOutputs(batch: Batch, items: BatchItem[]): ArchivedOutput[] {
  const statusOf = itemStatusOf(batch);
  const taken = new Set([MANIFEST_NAME]);
  const outputs: ArchivedOutput[] = [];
  for (const item of items) {
    const outcome = item.outcome;
    if (statusOf(item) !== 'succeeded' || !outcome) continue;
    const dot = item.name.lastIndexOf('.');
    const stem = dot > item.name.lastIndexOf('/') + 1 ? item.name.slice(0, dot) : item.name;
    outcome.files.forEach((file, i) => {
      const extension = file.includes('.') ? file.slice(file.lastIndexOf('.')) : '';
      const role = i === 0 ? '' : `.${file.slice(0, file.length - extension.length)}`;
      let name = `${stem}${role}${extension}`;
      for (let n = 2; taken.has(name.toLowerCase()); n++) name = `${stem}${role}-${n}${extension}`;
      taken.add(name.toLowerCase());
      outputs.push({ item: item.index, key: storageKeys.result(outcome.jobId, file), name });
    });
  }
  return outputs;
}

/**
 * `manifest.json` of a download: every item of the batch with its status, the names its results have
 * in this archive, and its error. `outputs` lists only files that are really in the archive; a success
 * whose result is no longer stored (deleted by its owner, or expired) says so with a 410.
 */
export function manifestOf(
  batch: Batch,
  items: BatchItem[],
  archived: ArchivedOutput[],
  generatedAt: string,
) {
  const statusOf = itemStatusOf(batch);
  const runningJob = new Map(batch.running.map((entry) => [entry.item, entry.jobId]));
  const byItem = new Map<number, string[]>();
  for (const output of archived) byItem.set(output.item, [...(byItem.get(output.item) ?? []), output.name]);
  return {
    batch_id: batch.id,
    status: batch.status,
    partial: !isFinished(batch),
    generated_at: generatedAt,
    mode: batch.operation,
    counts: batchCounts(batch),
    cost_credits: batch.chargedCredits,
    items: items.map((item) => {
      const status = statusOf(item);
      const outputs = byItem.get(item.index) ?? [];
      const lost = status === 'succeeded' && outputs.length === 0;
      return {
        name: item.name,
        status,
        job_id: runningJob.get(item.index) ?? item.outcome?.jobId ?? null,
        outputs,
        error:
          item.skipped ??
          (status === 'failed' ? (item.outcome?.error ?? null) : null) ??
          (lost ? { code: 410, message: 'The result is no longer stored' } : null),
      };
    }),
  };
}
