import { defineCustomResource, mutatingWebhook, validatingWebhook } from '@opkit/runtime';
import { Type } from '@sinclair/typebox';

// Tickets record who asked for them: the mutating webhook fills `requester` from the request's
// authenticated user (whatever the client sent), the validating one refuses any change to it.
export const Ticket = defineCustomResource({
  group: 'test.opkit.dev',
  version: 'v1',
  kind: 'Ticket',
  plural: 'tickets',
  scope: 'Namespaced',
  spec: Type.Object({
    title: Type.String(),
    requester: Type.Optional(Type.Object({ username: Type.Optional(Type.String()), groups: Type.Optional(Type.Array(Type.String())) })),
  }),
});
export const recordRequester = mutatingWebhook(Ticket.kind, {
  operations: ['CREATE'],
  failurePolicy: 'Fail',
  why: 'an unrecorded requester could be forged',
  mutate: (t, req) => {
    t.spec.requester = { username: req.userInfo.username, groups: req.userInfo.groups };
  },
});
export const keepRequester = validatingWebhook(Ticket.kind, {
  operations: ['UPDATE'],
  failurePolicy: 'Fail',
  why: 'a changed requester is a forged one',
  validate: (req) =>
    JSON.stringify(req.object?.spec.requester) !== JSON.stringify(req.oldObject?.spec.requester)
      ? 'spec.requester is set by the API server from who created the Ticket, and cannot change'
      : undefined,
});
