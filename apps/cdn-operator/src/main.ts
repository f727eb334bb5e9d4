import { runOperator } from '@opkit/runtime';
import { cdnClusterController } from './controllers/cdncluster/controller.js';

void runOperator({
  name: 'cdn-operator',
  description: 'runs CdnClusters: nginx balancers and caches that name each other as sources (cdn.opkit.dev/v1)',
  setup(manager) {
    manager.add(cdnClusterController);
  },
});
