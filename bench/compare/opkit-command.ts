/**
 * An opkit operator as the side-by-side benches run it: its bundle under the images' Node (with
 * OPKIT_BENCH_NODE_ARGS, the V8 settings to try), against the bench's API server, with no metrics,
 * probe or webhook server (the Go comparators have none to pay for). `extra` are the operator's own
 * flags.
 */
export const opkitCommand = (node: string, bundle: string, kubeconfig: string, extra: string[] = []): [string, string[]] => [
  node,
  [
    ...(process.env.OPKIT_BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? []),
    bundle,
    `--kubeconfig=${kubeconfig}`,
    '--metrics-bind-address=0',
    '--health-probe-bind-address=0',
    '--webhook-bind-address=0',
    ...extra,
  ],
];
