import { ApiError, type Kind } from '@opkit/runtime';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ChallengeObject } from '../api/acme/v1/challenge.js';
import { callWebhookSolver, challengeRequest, WebhookSolverError, type ChallengeRequest } from './webhook-solver.js';

const hook = { groupName: 'acme.example.com', solverName: 'hetzner', config: { zoneName: 'example.com', apiKeySecretRef: { name: 'hz', key: 'k' } } };
const challenge = {
  metadata: { name: 'c', namespace: 'team-a', uid: 'u-1' },
  spec: { dnsName: 'example.com', key: 'digest', solver: { dns01: { webhook: hook } } },
} as unknown as ChallengeObject;
const request = (action: ChallengeRequest['action'] = 'Present') =>
  challengeRequest(challenge, action, '_acme-challenge.example.com', 'example.com', { kind: 'Issuer', resourceNamespace: 'team-a' });

/** A context whose `call` answers as a solver (or the API server) would. */
const answering = (answer: () => unknown) => {
  const calls: { kind: Kind; body: unknown }[] = [];
  return {
    calls,
    ctx: {
      call: async <Req extends object, Res>(kind: Kind, body: Req): Promise<Res> => {
        calls.push({ kind, body });
        return answer() as Res;
      },
    },
  };
};

describe("cert-manager's DNS webhook solver protocol", () => {
  it("sends cert-manager's ChallengePayload to /apis/<groupName>/v1alpha1/<solverName>: the inner config only, names fully qualified", async () => {
    const { ctx, calls } = answering(() => ({ response: { success: true } }));
    await callWebhookSolver(ctx, hook, request('CleanUp'));
    expect(calls).toHaveLength(1);
    expect(calls[0]!.kind).toMatchObject({ group: 'acme.example.com', version: 'v1alpha1', plural: 'hetzner', namespaced: false });
    expect(calls[0]!.body).toEqual({
      apiVersion: 'webhook.acme.cert-manager.io/v1alpha1',
      kind: 'ChallengePayload',
      request: {
        uid: 'u-1',
        action: 'CleanUp',
        type: 'dns-01',
        dnsName: 'example.com',
        key: 'digest',
        resourceNamespace: 'team-a',
        resolvedFQDN: '_acme-challenge.example.com.',
        resolvedZone: 'example.com.',
        allowAmbientCredentials: false,
        config: hook.config,
      },
    });
  });

  it.each([
    [
      'a failure with the reason',
      { response: { success: false, status: { status: 'Failed', message: 'zone not found' } } },
      /could not present the TXT record _acme-challenge\.example\.com: zone not found$/,
    ],
    ['a failure without a reason', { response: { success: false } }, /it did not succeed and gave no reason$/],
    ['no response at all', {}, /it did not succeed and gave no reason$/],
    ['success as a string is not success', { response: { success: 'true' } }, /gave no reason$/],
  ])('names what the solver said: %s', async (_, answer, message) => {
    await expect(callWebhookSolver(answering(() => answer).ctx, hook, request())).rejects.toThrow(message);
  });

  it.each([
    [404, /is not served by the API server \(no APIService v1alpha1\.acme\.example\.com, or no solver of that name\)/],
    [503, /is registered but not available/],
    [403, /this operator may not call .*: grant its ServiceAccount create on hetzner\.acme\.example\.com/],
    [500, /answered 500: boom/],
  ])('names what the API server said: %d', async (status, message) => {
    const failing = answering(() => {
      throw new ApiError('POST', '/apis/acme.example.com/v1alpha1/hetzner', status, { message: 'boom' });
    });
    const err = await callWebhookSolver(failing.ctx, hook, request()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WebhookSolverError);
    expect((err as Error).message).toMatch(message);
  });

  it('property: any answer resolves only on success === true, and otherwise throws a bounded WebhookSolverError', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.jsonValue(), fc.record({ response: fc.record({ success: fc.jsonValue(), status: fc.jsonValue() }) })), async (answer) => {
        const outcome = await callWebhookSolver(answering(() => answer).ctx, hook, request()).then(
          () => 'ok' as const,
          (e: unknown) => e,
        );
        const success = (answer as { response?: { success?: unknown } } | null)?.response?.success === true;
        if (success) expect(outcome).toBe('ok');
        else {
          expect(outcome).toBeInstanceOf(WebhookSolverError);
          expect((outcome as Error).message.length).toBeLessThan(700);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('bounds a huge message from the solver', async () => {
    const huge = { response: { success: false, status: { message: 'x'.repeat(1_000_000) } } };
    const err = (await callWebhookSolver(answering(() => huge).ctx, hook, request()).catch((e: unknown) => e)) as Error;
    expect(err.message.length).toBeLessThan(700);
    expect(err.message.endsWith('x…')).toBe(true);
  });
});
