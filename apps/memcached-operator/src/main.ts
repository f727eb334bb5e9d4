import { flag, runOperator } from '@opkit/runtime';
import { memcachedController } from './controllers/memcached/controller.js';
import { addMemcachedOperator } from './operator.js';

void runOperator({
  name: 'memcached-operator',
  description: 'runs Memcached clusters (cache.opkit.dev/v1beta1 Memcached; v1alpha1 served and converted)',
  // A reconcile reads no Memcached but its own: with --shard, a replica may cache only its share.
  sharding: { selectOnServer: true },
  flags: {
    maxConcurrentReconciles: flag.int({ min: 1, default: memcachedController.options.maxConcurrentReconciles ?? 2, help: 'Memcacheds reconciled at once' }),
  },
  setup(manager, v) {
    addMemcachedOperator(manager, { maxConcurrentReconciles: v.maxConcurrentReconciles });
  },
});
