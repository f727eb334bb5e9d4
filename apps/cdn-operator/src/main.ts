import { flag, runOperator } from '@opkit/runtime';
import { cdnClusterController } from './controllers/cdncluster/controller.js';
import { systemNameserver } from './nginx/resolver.js';

void runOperator({
  name: 'cdn-operator',
  description: 'runs CdnClusters: nginx balancers and caches that name each other as sources (cdn.opkit.dev/v1)',
  flags: {
    originResolver: flag.optionalString({
      metavar: '<ip[:port]>',
      help: "DNS server nginx resolves origins' host names with, per request",
      defaultText: 'the first nameserver of /etc/resolv.conf, in a pod the cluster DNS',
    }),
  },
  setup(manager, v) {
    const resolver = v.originResolver || systemNameserver();
    if (!resolver) throw new Error("no DNS server for origins' host names: /etc/resolv.conf names none; pass --origin-resolver <ip>");
    manager.add(cdnClusterController({ resolver }));
  },
});
