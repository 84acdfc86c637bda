// Worker threads start without the TypeScript loader of the main thread: register it, then load the worker.
import { register } from 'tsx/esm/api';

register();
await import('./inference-worker.ts');
