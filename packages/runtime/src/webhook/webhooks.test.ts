import { describe, expect, it } from 'vitest';
import { ConfigMap } from '../client/kind.js';
import { validatingWebhook } from './admission.js';
import { Webhooks } from './webhooks.js';

describe('registering admission webhooks', () => {
  const hook = (name: string, path?: string) =>
    validatingWebhook(ConfigMap, {
      name,
      operations: ['CREATE'],
      failurePolicy: 'Ignore',
      why: 'a test',
      validate: () => undefined,
      ...(path ? { path } : {}),
    });
  const webhooks = () => new Webhooks({} as never);

  it('refuses a second webhook on a path already served (one would never be called)', () => {
    const w = webhooks();
    w.addAdmission(hook('a.configmaps.example'));
    expect(() => w.addAdmission(hook('b.configmaps.example'))).toThrow(
      'webhook b.configmaps.example: path /validate-core-v1-configmap already serves a.configmaps.example (give one a path of its own)',
    );
  });

  it('takes a second webhook of the same type and kind on a path of its own', () => {
    const w = webhooks();
    w.addAdmission(hook('a.configmaps.example'));
    expect(() => w.addAdmission(hook('b.configmaps.example', '/validate-core-v1-configmap-b'))).not.toThrow();
  });
});
