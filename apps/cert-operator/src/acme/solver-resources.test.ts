import { describe, expect, it } from 'vitest';
import type { ChallengeObject } from '../api/acme/v1/challenge.js';
import { adler32, identityLabels, solverHTTPRoute, solverIngress, solverPod, solverService, SOLVER_PORT } from './solver-resources.js';
import { CERT_APIS } from '../api/index.js';

const API = CERT_APIS.opkit;

const challenge = (http01: ChallengeObject['spec']['solver']['http01'], dnsName = 'www.example.com'): ChallengeObject => ({
  apiVersion: 'acme.cert.opkit.dev/v1',
  kind: 'Challenge',
  metadata: { name: 'web-1-2', namespace: 'shop', uid: 'uid-1' },
  spec: {
    url: 'https://ca/chall/1',
    authorizationURL: 'https://ca/authz/1',
    dnsName,
    type: 'HTTP-01',
    token: 'tok3n',
    key: 'tok3n.thumb',
    solver: { http01 },
    issuerRef: { name: 'acme' },
  },
});

describe('solver resources', () => {
  it('labels by Adler-32 of domain and token, as cert-manager does', () => {
    // Adler-32 of "Wikipedia" is 0x11E60398 (the usual test vector).
    expect(adler32('Wikipedia')).toBe(String(0x11e60398));
    expect(identityLabels(API, challenge({ ingress: {} }))).toEqual({
      'acme.cert.opkit.dev/http-domain': adler32('www.example.com'),
      'acme.cert.opkit.dev/http-token': adler32('tok3n'),
      'acme.cert.opkit.dev/http01-solver': 'true',
    });
  });

  it('makes a hardened pod: non-root, read-only root filesystem, no token, no capabilities, 10m/64Mi → 100m/64Mi', () => {
    const pod = solverPod(API, challenge({ ingress: {} }), 'opkit/acme-solver:1.2.3');
    expect(pod.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'Challenge', name: 'web-1-2', uid: 'uid-1', controller: true })]);
    expect(pod.spec?.automountServiceAccountToken).toBe(false);
    expect(pod.spec?.securityContext).toEqual({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
    const c = pod.spec!.containers[0]!;
    expect(c.image).toBe('opkit/acme-solver:1.2.3');
    expect(c.args).toEqual([`--listen-port=${SOLVER_PORT}`, '--domain=www.example.com', '--token=tok3n', '--key=tok3n.thumb']);
    expect(c.securityContext).toEqual({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, runAsNonRoot: true, capabilities: { drop: ['ALL'] } });
    expect(c.resources).toEqual({ requests: { cpu: '10m', memory: '64Mi' }, limits: { cpu: '100m', memory: '64Mi' } });
    expect(pod.metadata.labels).toMatchObject(identityLabels(API, challenge({ ingress: {} })));
  });

  it('merges the podTemplate: labels, annotations and nodeSelector added to; the rest replaced', () => {
    const pod = solverPod(
      API,
      challenge({
        ingress: {
          podTemplate: {
            metadata: { labels: { team: 'web', 'acme.cert.opkit.dev/http01-solver': 'false' }, annotations: { 'sidecar.istio.io/inject': 'true' } },
            spec: {
              nodeSelector: { zone: 'a' },
              tolerations: [{ key: 'edge', operator: 'Exists' }],
              priorityClassName: 'high',
              resources: { limits: { memory: '32Mi' } },
            },
          },
        },
      }),
      'img',
    );
    // Identity labels cannot be overridden: the Service selects the pod by them.
    expect(pod.metadata.labels).toMatchObject({ team: 'web', 'acme.cert.opkit.dev/http01-solver': 'true' });
    expect(pod.metadata.annotations?.['sidecar.istio.io/inject']).toBe('true');
    expect(pod.spec?.nodeSelector).toEqual({ 'kubernetes.io/os': 'linux', zone: 'a' });
    expect(pod.spec?.tolerations).toEqual([{ key: 'edge', operator: 'Exists' }]);
    expect(pod.spec?.priorityClassName).toBe('high');
    expect(pod.spec?.containers[0]?.resources).toEqual({ limits: { memory: '32Mi' } });
  });

  it('makes a NodePort Service by default, selecting the pod', () => {
    const ch = challenge({ ingress: {} });
    const svc = solverService(API, ch);
    expect(svc.spec).toMatchObject({ type: 'NodePort', selector: identityLabels(API, ch), ports: [{ port: SOLVER_PORT, targetPort: SOLVER_PORT }] });
    expect(solverService(API, challenge({ ingress: { serviceType: 'ClusterIP' } })).spec?.type).toBe('ClusterIP');
  });

  it('routes only the token path for the host to the Service, ImplementationSpecific unless the solver asks another pathType', () => {
    const ing = solverIngress(API, challenge({ ingress: { ingressClassName: 'nginx', ingressTemplate: { metadata: { annotations: { a: 'b' } } } } }), 'svc-1');
    expect(ing.spec?.ingressClassName).toBe('nginx');
    expect(ing.metadata.annotations).toMatchObject({ a: 'b' });
    expect(ing.spec?.rules).toEqual([
      {
        host: 'www.example.com',
        http: {
          paths: [
            {
              path: '/.well-known/acme-challenge/tok3n',
              pathType: 'ImplementationSpecific',
              backend: { service: { name: 'svc-1', port: { number: SOLVER_PORT } } },
            },
          ],
        },
      },
    ]);
    expect(solverIngress(API, challenge({ ingress: { pathType: 'Exact' } }), 's').spec?.rules?.[0]?.http?.paths[0]?.pathType).toBe('Exact');
    expect(solverIngress(API, challenge({ ingress: { class: 'traefik' } }), 's').metadata.annotations?.['kubernetes.io/ingress.class']).toBe('traefik');
    // IP identifiers have no host rule.
    expect(solverIngress(API, challenge({ ingress: {} }, '10.0.0.1'), 's').spec?.rules?.[0]?.host).toBeUndefined();
  });

  it('makes an HTTPRoute with the parentRefs, labels, hostname and Exact path', () => {
    const route = solverHTTPRoute(API, challenge({ gatewayHTTPRoute: { parentRefs: [{ name: 'gw', namespace: 'infra' }], labels: { l: 'v' } } }), 'svc-1');
    expect(route.metadata.labels).toMatchObject({ l: 'v' });
    expect(route.spec).toEqual({
      parentRefs: [{ name: 'gw', namespace: 'infra' }],
      hostnames: ['www.example.com'],
      rules: [{ matches: [{ path: { type: 'Exact', value: '/.well-known/acme-challenge/tok3n' } }], backendRefs: [{ name: 'svc-1', port: SOLVER_PORT }] }],
    });
  });
});
