import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findBinary, versions } from '../assets/binaries.js';
import { buildToolset } from '../assets/build-toolset.js';
import { ManagedProcess } from '../process/managed-process.js';
import { moduleYamls } from './module-files.js';

/** cert-manager's controller, built from its Go module (tools/control-plane/go/cert-manager), and its CRDs. */
export interface CertManagerToolset {
  /** The controller binary (our main.go wiring cert-manager's library; see its flags). */
  binary: string;
  /** cert-manager's six CRDs as its module ships them (deploy/crds), one YAML stream. */
  crds: string;
}

/**
 * Builds cert-manager's controller once (about 4 minutes on 2 cores, with progress lines; then
 * cached beside the control-plane binaries) and reads cert-manager's CRDs from its module.
 */
export async function certManagerToolset(): Promise<CertManagerToolset> {
  await buildToolset(['--only', 'cert-manager'], '[cert-manager]');
  return { binary: findBinary('cert-manager-controller'), crds: certManagerCrds() };
}

/**
 * cmctl, cert-manager's CLI, built from its module (github.com/cert-manager/cmctl/v2, pinned in
 * versions.json) once: about 3 minutes on 2 cores, with progress lines; then cached beside the
 * control-plane binaries. Returns the binary's path.
 */
export async function buildCmctl(): Promise<string> {
  await buildToolset(['--only', 'cmctl'], '[cmctl]');
  return findBinary('cmctl');
}

/**
 * cert-manager's six CRDs as its module ships them (deploy/crds), one YAML stream, at the version
 * the comparator pins: from Go's module cache, downloaded through the module proxy the first time
 * (a few seconds; no build).
 */
export function certManagerCrds(): string {
  return moduleYamls('cert-manager', 'github.com/cert-manager/cert-manager', versions.certManager, 'deploy/crds');
}

/** The controllers a CA (and SelfSigned) issuance needs, by cert-manager's names: our main.go's default. */
export const CERT_MANAGER_CA_CONTROLLERS = [
  'issuers',
  'clusterissuers',
  'certificates-trigger',
  'certificates-issuing',
  'certificates-key-manager',
  'certificates-request-manager',
  'certificates-readiness',
  'certificates-revision-manager',
  'certificaterequests-approver',
  'certificaterequests-issuer-ca',
  'certificaterequests-issuer-selfsigned',
] as const;

/** The controllers ACME issuance adds to those (orders, challenges, the ACME request issuer). */
export const CERT_MANAGER_ACME_CONTROLLERS = ['orders', 'challenges', 'certificaterequests-issuer-acme'] as const;

/**
 * A Certificate's conditions after `cmctl renew`: an Issuing condition (True, ManuallyTriggered,
 * the time of now) in place of any earlier one. cert-manager's controller, and opkit's in
 * cert-manager mode, renew on it.
 */
export function cmctlRenewConditions<C extends { type: string }>(conditions: readonly C[] = []) {
  return [
    ...conditions.filter((c) => c.type !== 'Issuing'),
    {
      type: 'Issuing',
      status: 'True',
      reason: 'ManuallyTriggered',
      message: 'Certificate re-issuance manually triggered',
      lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    },
  ];
}

export interface CertManagerOptions {
  kubeconfigPath: string;
  /** The one namespace it acts in (empty: all). */
  namespace?: string;
  clusterResourceNamespace: string;
  /** cert-manager's controller names; default: what a CA issuance needs. */
  controllers?: string[];
  /** More of its flags (ours mirror cert-manager's: --acme-http01-solver-image, --acme-http01-solver-nameservers). */
  extraArgs?: string[];
}

/** Starts cert-manager's controller as a process of its own, logged to a file; `stop()` ends it. */
export function startCertManager(toolset: CertManagerToolset, opts: CertManagerOptions): ManagedProcess {
  const p = new ManagedProcess({
    name: 'cert-manager',
    command: toolset.binary,
    args: [
      `--kubeconfig=${opts.kubeconfigPath}`,
      `--namespace=${opts.namespace ?? ''}`,
      `--cluster-resource-namespace=${opts.clusterResourceNamespace}`,
      ...(opts.controllers ? [`--controllers=${opts.controllers.join(',')}`] : []),
      ...(opts.extraArgs ?? []),
    ],
    logFile: join(mkdtempSync(join(tmpdir(), 'cert-manager-')), 'controller.log'),
  });
  p.start();
  return p;
}
