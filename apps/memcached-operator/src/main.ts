import { flag, runOperator } from '@opkit/runtime';
import { memcachedController } from './controllers/memcached/controller.js';

void runOperator({
  name: 'memcached-operator',
  description: 'runs Memcached clusters (cache.opkit.dev/v1alpha1 Memcached)',
  flags: {
    maxConcurrentReconciles: flag.int({ min: 1, default: memcachedController.options.maxConcurrentReconciles ?? 2, help: 'Memcacheds reconciled at once' }),
  },
  setup(manager, v) {
    manager.add({ ...memcachedController, options: { ...memcachedController.options, maxConcurrentReconciles: v.maxConcurrentReconciles } });
  },
});
