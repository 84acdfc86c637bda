/**
 * Example values of the job envelope, for the OpenAPI document. Apart from the schemas (./job.ts): the
 * handlers whose contract shows them import these and not the schemas, which zod would build at their cold start.
 */
import { jobPath, resultPath as resultPathOf } from '#core/jobs/envelope.ts';
import { PRICES } from '#core/jobs/operations.ts';
import { DEFAULT_PLATE_COLOR } from '#core/jobs/params.ts';

const JOB_ID = 'job_7kq2m9x4c8v1b6n3p5r0t2wz';
const self = jobPath(JOB_ID);
const resultJpg = resultPathOf(JOB_ID, 'result.jpg');

const links = (result?: string) => ({
  self,
  cancel: `${self}/cancel`,
  retry: `${self}/retry`,
  ...(result ? { result } : {}),
});

const queued = {
  result: true,
  job_id: JOB_ID,
  status: 'queued',
  code: 202,
  mode: 'plate',
  background: 'studio',
  plate_color: DEFAULT_PLATE_COLOR,
  plate_smoothing: true,
  plate_mask_only: false,
  quota: { remaining: 95, credits_remaining: 95 },
  id: JOB_ID,
  operation: 'plate',
  stage: 'queued',
  cancel_requested: false,
  cost_credits: PRICES.edit,
  attempts: 0,
  created_at: '2026-11-24T09:30:00.000Z',
  started_at: null,
  finished_at: null,
  expires_at: null,
  output: null,
  error: null,
  links: links(),
};

const succeeded = {
  ...queued,
  status: 'success',
  code: 200,
  url: resultJpg,
  expires_in_days: 30,
  stage: 'done',
  attempts: 1,
  started_at: '2026-11-24T09:30:00.412Z',
  finished_at: '2026-11-24T09:30:02.871Z',
  expires_at: '2026-12-24T09:30:02.871Z',
  output: {
    url: resultJpg,
    output_kind: 'image',
    inference_cached: false,
    model_version: { plate_detector: 'lpd-yunet-2023mar-dynamic' },
    plates_detected: 1,
    plates: [
      {
        corners: [
          [1412.5, 1768.2],
          [1806.1, 1774.9],
          [1804.3, 1862.4],
          [1410.8, 1855.0],
        ],
        score: 0.871,
      },
    ],
  },
  links: links(resultJpg),
};

const analysis = {
  photo_type: { value: 'exterior', label: 'Exterior', source_class: 'car', conf: 99 },
  view: { value: 'three_quarters_left', label: 'Front three-quarter left', conf: 91 },
  detections: { car: { id: 2, conf: 93 }, license_plate: { id: 1000, conf: 88 } },
  background_detections: { person: { id: 0, conf: 41 } },
};

const { result: _r, job_id: _j, code: _c, mode: _m, quota: _q, ...paramsAndResource } = succeeded;
const {
  background: _b,
  plate_color: _pc,
  plate_smoothing: _ps,
  plate_mask_only: _pm,
  url: _u,
  expires_in_days: _e,
  ...resource
} = paramsAndResource;

/** Example values of the job envelope (and of the Job resource), for the routes that answer them. */
export const JOB_EXAMPLES = {
  /** A plate job just created. */
  queued,
  succeeded,
  analyzed: {
    ...queued,
    status: 'success',
    code: 200,
    analysis,
    mode: 'analyze',
    quota: { remaining: 94, credits_remaining: 94 },
    operation: 'analyze',
    stage: 'done',
    cost_credits: PRICES.analysis,
    attempts: 1,
    started_at: '2026-11-24T09:30:00.398Z',
    finished_at: '2026-11-24T09:30:01.502Z',
    output: {
      analysis,
      output_kind: 'analysis',
      inference_cached: false,
      model_version: {
        car_detector: 'nanodet-plus-2022nov',
        feature_extractor: 'mobilenetv2-12-int8',
        analyze_head: 'analyze-head-2025.4',
        plate_detector: 'lpd-yunet-2023mar-dynamic',
      },
    },
  },
  failed: {
    ...queued,
    result: false,
    status: 'failed',
    code: 803,
    message: 'No license plate was detected in the photo',
    quota: { remaining: 100, credits_remaining: 100 },
    stage: 'done',
    attempts: 1,
    started_at: '2026-11-24T09:30:00.405Z',
    finished_at: '2026-11-24T09:30:01.118Z',
    error: { code: 803, message: 'No license plate was detected in the photo' },
  },
  /** The succeeded job as a Job resource (GET /jobs lists these). */
  resource,
};
