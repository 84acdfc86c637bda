import { describe, expect, it } from 'vitest';
import { unsupportedCdkLib } from '../../../lib/cdk-lib-version.ts';

describe('the aws-cdk-lib a deployer app brings to photo-jobs-cdk', () => {
  it('is accepted at the floor of the peer range and above it within the major version', () => {
    for (const installed of ['2.276.0', '2.276.1', '2.277.0', '2.300.4'])
      expect(unsupportedCdkLib(installed, '^2.276.0'), installed).toBeUndefined();
  });

  it('is refused below the floor or in another major version, with a message naming both versions', () => {
    for (const installed of ['2.275.9', '2.100.0', '1.204.0', '3.0.0']) {
      const message = unsupportedCdkLib(installed, '^2.276.0');
      expect(message, installed).toContain('photo-jobs-cdk needs aws-cdk-lib ^2.276.0');
      expect(message).toContain(`this app has aws-cdk-lib ${installed}`);
    }
  });
});
