/**
 * The soak tier: `npm run test:soak` (SOAK=1) runs the load-shaped tests at the sizes that soak the service
 * (200 concurrent jobs, 5,000 fuzz requests, a 50-photo ZIP); `npm test` runs the same assertions at sizes
 * that prove them in a fraction of the time. CI runs the soak tier only when SOAK=1 is set.
 */
export const SOAK = process.env.SOAK === '1';

/** `quick` in the default run, `soak` under SOAK=1. */
export const bySoak = <T>(quick: T, soak: T): T => (SOAK ? soak : quick);
