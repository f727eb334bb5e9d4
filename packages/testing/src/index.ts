export { startControlPlane, type ControlPlane, type ControlPlaneOptions, type UserCredentials } from './control-plane/control-plane.js';
export { AuditLog, WRITE_VERBS, type AuditEvent, type AuditFilter } from './control-plane/audit.js';
export { Etcd } from './control-plane/etcd.js';
export { APIServer } from './control-plane/apiserver.js';
export { KWOK_NODE_ANNOTATION } from './control-plane/kwok.js';
export { findBinary, defaultAssetsDir, BinaryNotFoundError, versions, type BinaryName } from './assets/binaries.js';
export { buildToolset } from './assets/build-toolset.js';
export {
  CERT_MANAGER_CA_CONTROLLERS,
  CERT_MANAGER_ACME_CONTROLLERS,
  buildCmctl,
  certManagerCrds,
  certManagerToolset,
  cmctlRenewConditions,
  startCertManager,
  type CertManagerToolset,
  type CertManagerOptions,
} from './comparators/cert-manager.js';
export {
  awsPrivateCaIssuerToolset,
  startAwsPcaStandIn,
  startAwsPrivateCaIssuer,
  type AwsPcaCall,
  type AwsPcaStandIn,
  type AwsPrivateCaIssuerToolset,
} from './comparators/aws-privateca-issuer.js';
export { startDnsWebhookSolver, type DnsWebhookSolver } from './comparators/dns-webhook-solver.js';
export { createCertificateAuthority, type CertificateAuthority, type KeyPairPem, type IssueOptions } from './pki/pki.js';
export { freePort, udpAndTcpOnOnePort } from './net/ports.js';
export { httpGet, httpPostJson, type ProbeResult, type ProbeOptions } from './net/probe.js';
export { waitFor, waitForQuiet, StopWaiting, type WaitOptions } from './wait.js';
export { INVALID_IMAGE_PREFIX } from './control-plane/kwok-stages.js';
export { run, CommandError, type RunOptions, type RunResult } from './run.js';
export { guardPid, releasePid } from './process/watchdog.js';
export { helmLint, helmTemplate, helmUpgradeInstall, helmUninstall, kubectlApply, type ChartOptions } from './helm/chart.js';
export { verifyChart, type RenderedObject } from './helm/verify-chart.js';
export { vendorChartDependencies } from './helm/vendor.js';
export { pinImages, publishChart, parseHelmDigest, type Pin, type PublishedChart, type PublishChartOptions } from './helm/publish.js';
export {
  parseTarget,
  publishRelease,
  publishImages,
  publishCharts,
  publishBundles,
  type ReleaseManifest,
  type ReleaseTarget,
  type Signer,
} from './release/publish.js';
export { versionRelease, setChartVersion, changelogSection, prependChangelog, operatorApps } from './release/version.js';
export { stagePackage, publishedManifest, publishedExports, SHIPPED_WITH, type PackageManifest } from './release/stage.js';
export { publishPackages, NPM_PACKAGES, type PublishedPackage, type PublishPackagesOptions } from './release/npm.js';
export { chartImages, verifySignedChart, type ChartImage, type VerifiedChart, type VerifySignedChartOptions } from './helm/signed-chart.js';
export { helmTemplateUmbrella } from './helm/umbrella.js';
export { renderChartReadme, syncChartReadme } from './helm/chart-docs.js';
export { explainUndescribed } from './helm/explain.js';
export { gatewayApiCrds, prometheusOperatorCrds } from './helm/published-crds.js';
export { verifyOperatorChart, type RenderedVariants, type OperatorChartExpectations } from './helm/operator-chart.js';
export { startPebble, type Pebble, type PebbleOptions } from './acme/pebble.js';
export { startBind, bindUnavailable, type Bind, type BindOptions } from './dns/bind.js';
export { startIngressStandIn, type InProcessImage, type IngressStandIn, type IngressStandInOptions, type RoutedRequest } from './acme/ingress-stand-in.js';
export type { E2ECluster, E2EMode, E2EModeName, Workload } from './e2e/cluster.js';
export { startPodRunner, type PodRunner, type PodRunnerOptions, type RunningPod } from './e2e/pod-runner.js';
export { startLocalCluster, type LocalCluster, type LocalClusterOptions } from './e2e/local-cluster.js';
export { startKindCluster, kindUnavailable, type KindClusterOptions } from './e2e/kind-cluster.js';
export { workspaceRoot, workspaceApp, localImages, requireBuilt, type WorkspaceApp } from './e2e/workspace.js';
export { containerArgv, localProcess, localEnv, hostLibrary, preloaded, dockerfileImageConfig, type LocalImage } from './e2e/image-command.js';
export { runInCluster, type InClusterRun } from './e2e/in-cluster.js';
export { installTraefik, type InClusterIngress } from './e2e/traefik.js';
export { portForward, type PortForward } from './e2e/port-forward.js';
export {
  e2eModes,
  startE2ECluster,
  helmInstall,
  helmTest,
  operatorPods,
  restartOperator,
  resourceVersions,
  versionChanges,
  changesAcrossRestart,
  leftovers,
  operatorIdentities,
  killOperatorPod,
  type Release,
} from './e2e/operator.js';
export { startLocalAcme, type LocalAcme } from './acme/local-acme.js';
export { validateBundle, type BundleFinding } from './olm/validator.js';
export { runFuzzTarget, listFuzzTargets, assertNoFindings, type FuzzOptions, type FuzzReport, type FuzzFinding } from './fuzz/run.js';
export { fuzzTargets, refusesWith, type FuzzTarget } from './fuzz/target.js';
export { startFaultProxy, type FaultProxy, type FaultProxyOptions } from './faults/proxy.js';
export { decideFault, DEFAULT_RATES, type Fault, type FaultRates } from './faults/schedule.js';
export { maxWritesPerObjectPerMinute, operatorWrites, replicaOf, writesByNonLeaders } from './faults/invariants.js';
export { faultReplay } from './faults/replay.js';
