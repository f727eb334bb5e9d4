import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { acmeClientMetrics, actionOf, pathClass } from './metrics.js';

describe('ACME client metrics', () => {
  it('labels paths without their identifiers, so label values stay bounded', () => {
    expect(pathClass('https://acme-v02.api.letsencrypt.org/acme/order/123456/789')).toBe('/acme/order');
    expect(pathClass('https://acme-v02.api.letsencrypt.org/acme/chall/1234/abcd/XyZ')).toBe('/acme/chall');
    expect(pathClass('https://127.0.0.1:14000/my-order/SxW5pQ7d')).toBe('/my-order');
    expect(pathClass('https://127.0.0.1:14000/dir')).toBe('/dir');
    expect(pathClass('https://ca.example/')).toBe('/');
    expect(pathClass('https://acme-v02.api.letsencrypt.org/draft-ietf-acme-ari-03/renewalInfo/aYhba4dGQEHhs3uEe6CuLN4ByNQ.AIdlQyE')).toBe(
      '/draft-ietf-acme-ari-03/renewalInfo',
    );
  });

  it.each([
    ['/acme/new-order', 'new_order'],
    ['/acme/order', 'order'],
    ['/nonce-plz', 'nonce_plz'],
    ['/', 'root'],
    ['/draft-ietf-acme-ari-03/renewalInfo', 'renewalInfo'],
  ])("names the action of %s as cert-manager's dashboards group it: %s", (path, action) => {
    expect(actionOf(path)).toBe(action);
  });

  it("counts requests by host, path, action, method and status, under cert-manager's names", async () => {
    const registry = new Registry();
    const observe = acmeClientMetrics(registry);
    observe({ method: 'POST', url: 'https://ca.example/acme/new-order', status: 201, seconds: 0.2 });
    observe({ method: 'POST', url: 'https://ca.example/acme/new-order', status: 429, seconds: 0.1 });
    observe({ method: 'HEAD', url: 'https://ca.example/acme/new-nonce', status: 'error', seconds: 30 });
    const text = await registry.metrics();
    expect(text).toContain(
      'certmanager_http_acme_client_request_duration_seconds_count{scheme="https",host="ca.example",path="/acme/new-order",action="new_order",method="POST",status="201"} 1',
    );
    expect(text).toContain(
      'certmanager_http_acme_client_request_count{scheme="https",host="ca.example",path="/acme/new-order",action="new_order",method="POST",status="201"} 1',
    );
    expect(text).toContain(
      'certmanager_http_acme_client_request_count{scheme="https",host="ca.example",path="/acme/new-order",action="new_order",method="POST",status="429"} 1',
    );
    expect(text).toContain(
      'certmanager_http_acme_client_request_count{scheme="https",host="ca.example",path="/acme/new-nonce",action="new_nonce",method="HEAD",status="error"} 1',
    );
  });
});
