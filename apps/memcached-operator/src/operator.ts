import { Pod, type Manager } from '@opkit/runtime';
import { MemcachedAPI } from './api/conversion.js';
import { memcachedController } from './controllers/memcached/controller.js';
import { podSummary } from './controllers/memcached/pod-summary.js';

export interface MemcachedOperatorOptions {
  maxConcurrentReconciles?: number;
}

/**
 * Everything the memcached operator adds to a manager: the conversion webhook of its API (v1alpha1
 * ⇄ v1beta1), the Memcached controller and the trimming of the pods it caches. main.ts and the integration tests both call this, so
 * the tests run the operator as it ships.
 */
export function addMemcachedOperator(manager: Manager, options: MemcachedOperatorOptions = {}): Manager {
  manager.addConversion(MemcachedAPI);
  // Its pods are held as the little the status reads of them (pod-summary.ts).
  manager.cache.transform(Pod, podSummary);
  manager.add({
    ...memcachedController,
    options: { ...memcachedController.options, ...(options.maxConcurrentReconciles ? { maxConcurrentReconciles: options.maxConcurrentReconciles } : {}) },
  });
  return manager;
}
