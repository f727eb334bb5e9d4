// @opkit/testing/containers: the container tooling behind the e2e kind mode, for the CLI
// (npm run containers), the test driver and the benchmarks.
export { ensureEngine, stopEngine, dockerServerVersion, cannotProvideEngine, type Engine } from './engine.js';
export { readMachineFacts, machineQuirks, describeQuirks, type MachineFacts, type MachineQuirks } from './machine.js';
export { imagePlan, probeRegistries, OFFICIAL_IMAGES, type ImageRole, type ImageSource } from './image-plan.js';
export { currentImagePlan, imageFor, buildAppImage, appImageNotices, buildBundleImage, pebbleImage, npmCaFile } from './images.js';
export { ensureImage, imageNodeBinary, recipes, LOCAL_PREFIX, K8S_REPOSITORY, PAUSE_IMAGE, type ImageRecipe } from './local-images.js';
export { ensureDebianBase, debianBaseTag } from './debian-base.js';
export { ensureKindNodeImage } from './kind-node-image.js';
export { ensureKindToolset, type KindToolset } from './kind-toolset.js';
export { kindClusterConfig } from './kind-config.js';
export { docker, imageFiles, imageId, imageSize } from './docker.js';
export { ensureLocalRegistry, connectRegistryToKind, registryImage, registryAction, registryPort, REGISTRY_CONTAINER, type LocalRegistry } from './registry.js';
export { pushImage, pushIndex, pushedDigest, tagManifest, MANIFEST_TYPES, type PushedImage, type PushedIndex, type PlatformImage } from './push.js';
export { RELEASE_PLATFORMS, hostPlatform, parsePlatforms, ensureEmulation, type Platform, type Arch } from './platforms.js';
export { generateKeyPair, signArtifact, attestSbom, verifySignature, verifiedSbom, dockerConfigEnv, SignatureError, type SigningKey } from './sign.js';
export { imageSbom } from './sbom.js';
