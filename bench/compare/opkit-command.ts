/**
 * The node flags to try for opkit (V8 settings), from OPKIT_BENCH_NODE_ARGS: '|'-separated variants,
 * each space-separated flags ('' is Node's defaults, as the image runs it). A bench that compares
 * variants runs each; the others take the first.
 */
export const nodeArgVariants = (): string[] => (process.env.OPKIT_BENCH_NODE_ARGS ?? '').split('|').map((v) => v.trim());

/**
 * An opkit operator as the side-by-side benches run it: its bundle under the images' Node (with
 * `nodeArgs`, the V8 settings to try), against the bench's API server, with no metrics, probe or
 * webhook server (the Go comparators have none to pay for). `extra` are the operator's own flags.
 */
export const opkitCommand = (node: string, bundle: string, kubeconfig: string, extra: string[] = [], nodeArgs = nodeArgVariants()[0]!): [string, string[]] => [
  node,
  [
    ...nodeArgs.split(' ').filter(Boolean),
    bundle,
    `--kubeconfig=${kubeconfig}`,
    '--metrics-bind-address=0',
    '--health-probe-bind-address=0',
    '--webhook-bind-address=0',
    ...extra,
  ],
];
