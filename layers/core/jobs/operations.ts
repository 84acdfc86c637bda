/**
 * Every operation of the service, one record each: what it costs, what it outputs, where it may be asked
 * for, which models it runs and how it is described. The job input's `mode`, the prices, the batch and
 * legacy lists, a job's `output_kind` and the OpenAPI document's sentences about them all read this;
 * layers/vision/operation-runner.ts maps each name to its implementation (CONTRIBUTING.md, Add an
 * operation).
 */

/** Spec section 8: the price of each kind of work, in credits. A price change is one line here. */
export const PRICES = { edit: 5, analysis: 1 } as const;

export type OutputKind = 'image' | 'mask' | 'analysis';

export interface OperationRecord {
  /** Which of PRICES it costs; reserved at creation, charged on success. */
  price: keyof typeof PRICES;
  /** What a finished job holds: a result image, a mask only, or an analysis. */
  output: OutputKind;
  /** Accepted as a batch's `mode` (POST /batches). */
  batchable: boolean;
  /** Accepted as the `mode` of the legacy POST /process (spec 2.3). */
  legacyProcess: boolean;
  /** Draws a background (a preset, a file or transparency); the job's `background` is null for the others. */
  drawsBackground: boolean;
  /** Ids of models/manifest.ts whose files its output depends on (the inference cache key). */
  models: readonly string[];
  /** Its sentence in the `mode` documentation. */
  description: string;
}

/**
 * The background operations read the same models: ISNet, NanoDet, the plate signals, and MobileNet with
 * the analyze head for the interior check.
 */
const BACKGROUND_MODELS = [
  'isnet-fp32',
  'nanodet-plus',
  'lpd-yunet',
  'ppocr-det',
  'ppocr-rec',
  'ppocr-keys',
  'mobilenetv2-int8',
] as const;

export const OPERATION_REGISTRY = {
  plate: {
    price: 'edit',
    output: 'image',
    batchable: true,
    legacyProcess: true,
    drawsBackground: false,
    models: ['lpd-yunet', 'nanodet-plus', 'ppocr-det', 'ppocr-rec', 'ppocr-keys'],
    description: '`plate` hides the licence plate',
  },
  background: {
    price: 'edit',
    output: 'image',
    batchable: true,
    legacyProcess: false,
    drawsBackground: true,
    models: BACKGROUND_MODELS,
    description: '`background` replaces the background without hiding the plate',
  },
  studio_background: {
    price: 'edit',
    output: 'image',
    batchable: true,
    legacyProcess: true,
    drawsBackground: true,
    models: BACKGROUND_MODELS,
    description:
      '`studio_background` replaces it with a preset, `background_file` or the key’s stored background',
  },
  plate_mask: {
    price: 'edit',
    output: 'mask',
    batchable: true,
    legacyProcess: false,
    drawsBackground: false,
    models: ['lpd-yunet', 'nanodet-plus', 'ppocr-det', 'ppocr-rec', 'ppocr-keys'],
    description: '`plate_mask` returns the plate mask only',
  },
  background_mask: {
    price: 'edit',
    output: 'mask',
    batchable: true,
    legacyProcess: false,
    drawsBackground: false,
    models: ['isnet-fp32', 'nanodet-plus'],
    description: '`background_mask` returns the background mask only',
  },
  analyze: {
    price: 'analysis',
    output: 'analysis',
    batchable: false,
    legacyProcess: false,
    drawsBackground: false,
    models: ['nanodet-plus', 'mobilenetv2-int8', 'lpd-yunet'],
    description: '`analyze` classifies the photo',
  },
} as const satisfies Record<string, OperationRecord>;

export type Operation = keyof typeof OPERATION_REGISTRY;

/** The operation names in the registry's order, as a tuple for `z.enum`. */
export const OPERATION_NAMES = Object.keys(OPERATION_REGISTRY) as [Operation, ...Operation[]];

const namesWhere = <T extends Operation>(test: (record: OperationRecord) => boolean) =>
  OPERATION_NAMES.filter((name) => test(OPERATION_REGISTRY[name])) as [T, ...T[]];

type Where<Key extends 'batchable' | 'legacyProcess'> = {
  [Name in Operation]: (typeof OPERATION_REGISTRY)[Name][Key] extends true ? Name : never;
}[Operation];

/** Every operation a batch may run (spec 4, POST /batches: all but `analyze`). */
export const BATCH_OPERATION_NAMES = namesWhere<Where<'batchable'>>((record) => record.batchable);
/** The modes of the legacy POST /process. */
export const LEGACY_PROCESS_OPERATION_NAMES = namesWhere<Where<'legacyProcess'>>(
  (record) => record.legacyProcess,
);

export const costOf = (operation: Operation): number => PRICES[OPERATION_REGISTRY[operation].price];
export const outputKindOf = (operation: Operation): OutputKind => OPERATION_REGISTRY[operation].output;

/** `5 credits` / `1 credit`. */
export const credits = (amount: number): string => `${amount} credit${amount === 1 ? '' : 's'}`;

/** The `mode` documentation: each operation's sentence, then the prices. */
export const modeDescription = (): string =>
  `The operation. ${OPERATION_NAMES.map((name) => OPERATION_REGISTRY[name].description).join('; ')} (` +
  `${credits(PRICES.analysis)}; every other operation costs ${PRICES.edit}).`;
