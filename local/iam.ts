/**
 * IAM on the embedded stack (docs/aws-parity.md): the policies of the synthesized template per function
 * (iam/policies.ts), the authorizations each stand-in request needs (iam/requests.ts), and their
 * evaluation by @cloud-copilot/iam-simulate (iam/authorizer.ts).
 */
export * from './iam/authorizer.ts';
export * from './iam/policies.ts';
export * from './iam/requests.ts';
