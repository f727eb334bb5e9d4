import { runOperator } from '@opkit/runtime';
import { memcachedController } from './controllers/memcached/controller.js';

void runOperator({
  name: 'memcached-operator',
  description: 'runs Memcached clusters (cache.opkit.dev/v1alpha1 Memcached)',
  setup(manager) {
    manager.add(memcachedController);
  },
});
