import type { AuditEvent } from '@opkit/testing';

/**
 * Requests per object by what was asked ("secrets create", "certificates/status update 409" for a
 * conflict, "/apis get" for discovery), from the API server's audit log: where an operator's writes, reads and Events per
 * object come from, run by run.
 */
export function requestsBy(events: AuditEvent[], perObjects: number): Record<string, number> {
  const by: Record<string, number> = {};
  for (const e of events) {
    // A request for no resource (discovery, /version) is named by its path.
    const target = e.objectRef?.resource
      ? `${e.objectRef.resource}${e.objectRef.subresource ? `/${e.objectRef.subresource}` : ''}`
      : (e.requestURI.split('?')[0] ?? e.requestURI);
    const what = `${target} ${e.verb}${e.responseStatus?.code === 409 ? ' 409' : ''}`;
    by[what] = (by[what] ?? 0) + 1 / perObjects;
  }
  return by;
}
