import { ConfigMap, controllerFor, controllerReference, type Condition } from '@opkit/runtime';
import { Greeting } from './greeting.js';

// Greeting → a ConfigMap holding the greeting, and a Ready condition.
export const greeterController = controllerFor(Greeting.kind)
  .owns(ConfigMap) // edits to or deletion of the ConfigMap reconcile its Greeting
  .reconcile(async (req, ctx) => {
    const { cache, recorder, log } = ctx;
    const greeting = await cache.get(Greeting.kind, req);
    if (!greeting) return; // deleted: the ConfigMap goes with it (owner reference → garbage collection)

    const text = `Hello, ${greeting.spec.who}!`;
    const message = greeting.spec.style === 'loud' ? text.toUpperCase() : text;
    const current = await cache.get(ConfigMap, req);
    // Every write goes through the context: sent only if something changes, and the next reconcile
    // of this Greeting waits (in the queue, not in a worker) until the cache shows it.
    const { outcome } = await ctx.apply(
      ConfigMap,
      {
        metadata: { name: req.name, namespace: req.namespace, ownerReferences: [controllerReference(Greeting.kind, greeting)] },
        data: { message },
      },
      current,
    );
    if (outcome !== 'unchanged') {
      log.info({ outcome }, 'greeting written');
      recorder.normal(greeting, outcome === 'created' ? 'Created' : 'Updated', `ConfigMap ${req.name} ${outcome}`);
    }

    // Status only changes when something changed: an idle resync writes nothing.
    const conditions = ctx.setCondition(greeting.status?.conditions as Condition[] | undefined, {
      type: 'Ready',
      status: 'True',
      reason: 'Greeted',
      message: `said "${message}"`,
      observedGeneration: greeting.metadata.generation,
    });
    await ctx.updateStatus(Greeting.kind, greeting, { message, observedGeneration: greeting.metadata.generation, conditions });
  });
