/**
 * Every endpoint of the API under `/api/v1`, by its folder: `functions/api/<folder>/schema.ts` states its
 * routes and `handler.ts` serves them. The route table below is made from this list (lib/ makes the
 * functions and routes from it, the `$default` route's function answers 404 and 405 from it) and
 * ./openapi.ts the document (with the schema components of its document.ts, listed there), so a new endpoint
 * adds its line here, and there when it defines components of its own.
 */
import { contract as cancelJob } from './cancel-job/schema.ts';
import { contract as controlBatch } from './control-batch/schema.ts';
import { contract as createAsset } from './create-asset/schema.ts';
import { contract as createBatch } from './create-batch/schema.ts';
import { contract as createJob } from './create-job/schema.ts';
import { contract as createUpload } from './create-upload/schema.ts';
import { contract as deleteFile } from './delete-file/schema.ts';
import { contract as downloadBatch } from './download-batch/schema.ts';
import { contract as getBatch } from './get-batch/schema.ts';
import { contract as getJob } from './get-job/schema.ts';
import { contract as getOpenapi } from './get-openapi/schema.ts';
import { contract as getQuota } from './get-quota/schema.ts';
import { contract as getResult } from './get-result/schema.ts';
import { contract as listDeliveries } from './list-deliveries/schema.ts';
import { contract as listFiles } from './list-files/schema.ts';
import { contract as listJobs } from './list-jobs/schema.ts';
import { contract as redeliverWebhook } from './redeliver-webhook/schema.ts';
import { contract as retryJob } from './retry-job/schema.ts';
import { contract as webhookSettings } from './webhook-settings/schema.ts';

export const ENDPOINTS = {
  'cancel-job': cancelJob,
  'control-batch': controlBatch,
  'create-asset': createAsset,
  'create-batch': createBatch,
  'create-job': createJob,
  'create-upload': createUpload,
  'delete-file': deleteFile,
  'download-batch': downloadBatch,
  'get-batch': getBatch,
  'get-job': getJob,
  'get-openapi': getOpenapi,
  'get-quota': getQuota,
  'get-result': getResult,
  'list-deliveries': listDeliveries,
  'list-files': listFiles,
  'list-jobs': listJobs,
  'redeliver-webhook': redeliverWebhook,
  'retry-job': retryJob,
  'webhook-settings': webhookSettings,
} as const;
