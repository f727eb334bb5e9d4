import { waitFor } from '@opkit/testing';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigMap, Namespace } from '../client/kind.js';
import { controllerFor } from '../controller/builder.js';
import type { Manager } from '../manager/manager.js';
import { testManager } from '../testing/harness.js';
import { useControlPlane } from '../testing/control-plane-suite.js';

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: { key: string; value: Record<string, unknown> }[];
  status: { code: number; message?: string };
}

/** A stand-in OpenTelemetry collector: what arrives at /v1/traces, parsed as OTLP/JSON. */
function collector() {
  const received: { resource: Record<string, unknown>; spans: OtlpSpan[] }[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      if (req.url === '/v1/traces' && req.headers['content-type'] === 'application/json') {
        const doc = JSON.parse(body) as {
          resourceSpans: { resource: { attributes: { key: string; value: { stringValue?: string } }[] }; scopeSpans: { spans: OtlpSpan[] }[] }[];
        };
        for (const rs of doc.resourceSpans) {
          received.push({
            resource: Object.fromEntries(rs.resource.attributes.map((a) => [a.key, a.value.stringValue])),
            spans: rs.scopeSpans.flatMap((s) => s.spans),
          });
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  return { server, received, spans: () => received.flatMap((r) => r.spans) };
}

const attr = (s: OtlpSpan, key: string) => s.attributes.find((a) => a.key === key)?.value;

describe('OpenTelemetry tracing of reconciles and their API calls', () => {
  const suite = useControlPlane({}, async (_, admin) => {
    await admin.create(Namespace, { metadata: { name: 'traced' } });
  });
  const otel = collector();
  let manager: Manager;

  beforeAll(async () => {
    await new Promise<void>((r) => otel.server.listen(0, '127.0.0.1', r));
    const endpoint = `http://127.0.0.1:${(otel.server.address() as AddressInfo).port}`;
    manager = testManager(suite.plane.kubeConfig, { namespaces: ['traced'], tracing: { endpoint, intervalMs: 200 } }).manager;
    manager.add(
      controllerFor(ConfigMap).reconcile(async (req, ctx) => {
        const cm = await ctx.cache.get(ConfigMap, req);
        if (cm && cm.metadata.annotations?.seen !== 'yes') await ctx.patch(ConfigMap, req, { metadata: { annotations: { seen: 'yes' } } });
      }),
    );
    await manager.start();
  });
  afterAll(async () => {
    await manager?.stop();
    otel.server.close();
  });

  it('sends a span per reconcile, with its triggers, and its API calls as children carrying the trace', async () => {
    await suite.admin.create(ConfigMap, { metadata: { namespace: 'traced', name: 'app' }, data: { v: '1' } });
    const reconcile = await waitFor('the first reconcile of traced/app', () =>
      otel
        .spans()
        .find(
          (s) => s.name === 'reconcile configmap' && attr(s, 'opkit.object.name')?.stringValue === 'app' && attr(s, 'opkit.reconcile.writes')?.intValue === '1',
        ),
    );
    expect(attr(reconcile, 'opkit.reconcile.triggers')).toEqual({ arrayValue: { values: [{ stringValue: 'ConfigMap traced/app add' }] } });
    expect(attr(reconcile, 'opkit.reconcile.result')).toEqual({ stringValue: 'success' });
    expect(reconcile.parentSpanId).toBeUndefined();
    expect(reconcile.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(BigInt(reconcile.endTimeUnixNano)).toBeGreaterThan(BigInt(reconcile.startTimeUnixNano));

    const patch = await waitFor('its PATCH as a child span', () => otel.spans().find((s) => s.parentSpanId === reconcile.spanId));
    expect(patch).toMatchObject({ traceId: reconcile.traceId, name: 'PATCH', kind: 3 });
    expect(attr(patch, 'url.path')).toEqual({ stringValue: '/api/v1/namespaces/traced/configmaps/app' });
    expect(attr(patch, 'http.response.status_code')).toEqual({ intValue: '200' });
    expect(otel.received[0]!.resource['service.name']).toBe('test-operator');

    // Its own write's watch event reconciles it again: a new trace, whose trigger says so.
    const second = await waitFor('the reconcile its write caused', () =>
      otel
        .spans()
        .find(
          (s) =>
            s.name === 'reconcile configmap' &&
            s.traceId !== reconcile.traceId &&
            JSON.stringify(attr(s, 'opkit.reconcile.triggers')).includes('ConfigMap traced/app update'),
        ),
    );
    expect(attr(second, 'opkit.reconcile.writes')).toEqual({ intValue: '0' });
    // Watches and the leader's renewals are not reconciles: they make no spans.
    expect(otel.spans().every((s) => s.name.startsWith('reconcile ') || s.parentSpanId)).toBe(true);
  });
});
