import type { KubeConfig } from '@kubernetes/client-node';
import type { LocalImage } from '../e2e/image-command.js';
import { freePort } from '../net/ports.js';
import { startIngressStandIn, type InProcessImage, type IngressStandIn } from './ingress-stand-in.js';
import { startPebble, type Pebble } from './pebble.js';

export interface LocalAcme {
  pebble: Pebble;
  standIn: IngressStandIn;
  /** The ingress class the stand-in serves: solver Ingresses must use it. */
  ingressClass: string;
  /** Values for the cert-operator chart: its self-check resolves and connects as Pebble does. */
  chartValues: Record<string, unknown>;
  /** An ACME issuer's spec on this Pebble, solving HTTP-01 through Ingresses of the stand-in's class (either API group). */
  issuerSpec(accountSecret: string): { acme: Record<string, unknown> };
  stop(): Promise<void>;
}

/**
 * An ACME server for a simulated cluster: Pebble, and the ingress stand-in on Pebble's HTTP-01
 * port running the solver pods' containers as local processes (image repository → the image as
 * run locally). Pebble's DNS answers 127.0.0.1 for every name, so its validations and the
 * operator's self-check both reach the stand-in.
 */
export async function startLocalAcme(
  kubeConfig: KubeConfig,
  solverImages: Record<string, LocalImage | InProcessImage>,
  ingressClass = 'nginx',
  /** Where the stand-in serves HTTP-01 (a free port by default; 80 for a client that cannot be told another, such as cert-manager's self-check). */
  httpPort?: number,
): Promise<LocalAcme> {
  httpPort ??= await freePort();
  const standIn = await startIngressStandIn(kubeConfig, { port: httpPort, images: solverImages, ingressClass });
  const pebble = await startPebble({ httpPort }).catch(async (err: Error) => {
    await standIn.stop();
    throw err;
  });
  return {
    pebble,
    standIn,
    ingressClass,
    issuerSpec: (accountSecret) => ({
      acme: {
        server: pebble.directoryUrl,
        caBundle: Buffer.from(pebble.tlsCaPem).toString('base64'),
        privateKeySecretRef: { name: accountSecret },
        solvers: [{ http01: { ingress: { ingressClassName: ingressClass } } }],
      },
    }),
    chartValues: { acme: { selfCheck: { nameservers: [pebble.dnsServer] } }, extraArgs: [`--acme-http01-self-check-port=${httpPort}`] },
    async stop() {
      await standIn.stop();
      await pebble.stop();
    },
  };
}
