import { expect } from 'vitest';

// biome-ignore lint/suspicious/noExplicitAny: CloudFormation properties are free-form JSON.
type Template = { Resources: Record<string, { Type: string; Properties: Record<string, any> }> };

/**
 * Removes from the role of the function running `handler` every statement allowing `action` on a
 * resource `matches` accepts, as a construct that forgot that grant would synthesize.
 */
export const revoke =
  (handler: string, action: string, matches: (resource: unknown) => boolean) =>
  (templates: { data: object; service: object }) => {
    const { Resources } = templates.service as Template;
    const fn = Object.values(Resources).find(
      (r) =>
        r.Type === 'AWS::Lambda::Function' &&
        (r as { Metadata?: object }).Metadata &&
        JSON.stringify(r).includes(handler),
    );
    const roleId = fn!.Properties.Role['Fn::GetAtt'][0];
    let removed = 0;
    for (const policy of Object.values(Resources)) {
      if (policy.Type !== 'AWS::IAM::Policy' || !JSON.stringify(policy.Properties.Roles).includes(roleId))
        continue;
      const document = policy.Properties.PolicyDocument;
      const kept = document.Statement.filter(
        (s: { Action: unknown; Resource: unknown }) =>
          !([s.Action].flat().includes(action) && [s.Resource].flat().some(matches)),
      );
      removed += document.Statement.length - kept.length;
      document.Statement = kept;
    }
    expect(removed).toBeGreaterThan(0);
  };
