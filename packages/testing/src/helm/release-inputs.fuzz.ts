import fc from 'fast-check';
import { pushedDigest } from '../containers/push.js';
import { fuzzTargets } from '../fuzz/target.js';
import { parseArgs } from '../release/release-cli.js';
import { parseHelmDigest } from './publish.js';
import { chartImages, renderedImages } from './signed-chart.js';

// What the release tooling reads from outside: a chart's values and rendered manifests (from a
// registry someone else may write to), helm's and docker's output, the command line. A result, or
// the error each promises, for any input; and nothing it returns that its checks would not hold.

const DIGEST = /^sha256:[0-9a-f]{64}$/;
const hex = fc.stringMatching(/^[0-9a-f]{64}$/);
const saysWhy = (prefix: RegExp) => (err: unknown) => err instanceof Error && prefix.test(err.message);
/** JSON shaped like values and manifests: image maps and container lists mixed with anything. */
const imageish = fc.letrec<{ v: unknown }>((tie) => ({
  v: fc.oneof(
    { depthSize: 'small' },
    fc.jsonValue({ maxDepth: 2 }),
    fc.record({
      repository: fc.oneof(fc.string(), fc.integer()),
      registry: fc.option(fc.string()),
      digest: fc.oneof(
        fc.string(),
        hex.map((h) => `sha256:${h}`),
      ),
    }),
    fc.record({ containers: fc.array(fc.oneof(fc.record({ image: fc.oneof(fc.string(), fc.integer()) }), fc.jsonValue({ maxDepth: 1 })), { maxLength: 3 }) }),
    fc.dictionary(fc.oneof(fc.constantFrom('image', 'global', 'initContainers', 'spec'), fc.string({ maxLength: 8 })), tie('v'), { maxKeys: 4 }),
    fc.array(tie('v'), { maxLength: 3 }),
  ),
}));

export const targets = fuzzTargets(
  {
    name: 'chartImages: for any values, each image found is pinned to a sha256 digest or reported unpinned',
    arbitrary: imageish.v,
    run: (values: unknown) => {
      for (const i of chartImages((values ?? {}) as Record<string, unknown>)) {
        if (typeof i.repository !== 'string') throw new Error(`repository ${String(i.repository)}`);
        if (i.ref !== undefined && !DIGEST.test(i.ref.split('@').pop()!)) throw new Error(`pinned to ${i.ref}`);
      }
    },
  },
  {
    name: 'renderedImages: for any manifests, strings only, each once',
    arbitrary: fc.array(imageish.v, { maxLength: 4 }),
    run: (objects: unknown[]) => {
      const found = renderedImages(objects);
      if (found.some((i) => typeof i !== 'string') || new Set(found).size !== found.length) throw new Error(JSON.stringify(found));
    },
  },
  {
    name: 'pushedDigest: a sha256 digest of that repository, or an error saying there is none, for any RepoDigests',
    arbitrary: fc.tuple(
      fc.array(
        fc.oneof(
          fc.string(),
          hex.map((h) => `localhost:5001/opkit/x@sha256:${h}`),
        ),
        { maxLength: 4 },
      ),
      fc.constantFrom('opkit/x', 'opkit'),
    ),
    run: ([digests, repository]: [string[], string]) => {
      const d = pushedDigest(digests, 'localhost:5001', repository);
      if (!DIGEST.test(d) || !digests.includes(`localhost:5001/${repository}@${d}`)) throw new Error(`${d} from ${JSON.stringify(digests)}`);
    },
    expected: saysWhy(/^no sha256 digest for /),
  },
  {
    name: 'parseHelmDigest: a sha256 digest helm printed, or an error quoting what it printed, for any output',
    arbitrary: fc.oneof(
      fc.string(),
      hex.map((h) => `Pulled: x\nDigest: sha256:${h}\n`),
    ),
    run: (out: string) => {
      const d = parseHelmDigest(out);
      if (!DIGEST.test(d) || !out.includes(d)) throw new Error(`${d} from ${JSON.stringify(out)}`);
    },
    expected: saysWhy(/^helm reported no digest: /),
  },
  {
    name: 'the release command line: phase, arguments and known flags, or an error naming the flag, for any argv',
    arbitrary: fc.array(
      fc.oneof(
        fc.constantFrom('publish', 'version', '--registry', '--plain-http', '--key', '--out', '--dry-run', '--x', '--registry=a/b'),
        fc.string({ maxLength: 12 }),
      ),
      { maxLength: 6 },
    ),
    run: (argv: string[]) => parseArgs(argv),
    expected: saysWhy(/^(unknown flag --|--[a-z-]+ needs a value: )/),
  },
);
