import { CfnOutput, CfnParameter, Stack, type StackProps } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';
import { MasterKey, PhotoJobs, type PhotoJobsProps } from '../index.ts';

export interface ServiceStackProps extends StackProps {
  table: dynamodb.ITable;
  bucket: s3.IBucket;
  /** Anything else for the construct (alarm topic, throttling...). */
  jobs?: Omit<PhotoJobsProps, 'existingTable' | 'existingBucket'>;
}

/** The deploy parameter that carries the master key's sha256 (`cdk deploy --parameters MasterKeySha256=…`). */
export const MASTER_KEY_PARAMETER = 'MasterKeySha256';

/** The project's own app: `PhotoJobs` over the data stack's table and bucket. */
export class ServiceStack extends Stack {
  readonly jobs: PhotoJobs;

  constructor(scope: Construct, id: string, props: ServiceStackProps) {
    super(scope, id, props);

    // Only the key's sha256 is deployed: it cannot be turned back into the key, so the template and the
    // function configuration hold nothing that grants access. Empty disables the master key.
    const masterKeySha256 = new CfnParameter(this, MASTER_KEY_PARAMETER, {
      type: 'String',
      default: '',
      noEcho: true,
      allowedPattern: '^([0-9a-f]{64})?$',
      description: 'sha256 (hex) of the master API key; empty disables it',
    });

    this.jobs = new PhotoJobs(this, 'Jobs', {
      masterKey: MasterKey.fromSha256(masterKeySha256.valueAsString),
      ...props.jobs,
      existingTable: props.table,
      existingBucket: props.bucket,
    });

    new CfnOutput(this, 'ApiUrl', { value: this.jobs.apiUrl });
    new CfnOutput(this, 'StateMachineArn', { value: this.jobs.stateMachine.stateMachineArn });
    new CfnOutput(this, 'EventBusName', { value: this.jobs.eventBus.eventBusName });
  }
}
