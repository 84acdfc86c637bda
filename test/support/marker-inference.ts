import { inferenceHandler } from '../../functions/inference/handler.ts';
import { markerModelKey, markerOperationRunner } from './marker-vision.ts';

/**
 * The inference function over the marker runner (marker-vision.ts), for the local stack's
 * LOCAL_INFERENCE_HANDLER: the same handler, cache and storage as the image's, without the models.
 */
export const handler = inferenceHandler({ runner: markerOperationRunner, modelKey: markerModelKey });
