import type { Controller } from '../controller/controller.js';
import type { ShardListener } from './member.js';

/** Tells every sharded controller of a replica what its ShardMember decides, and drains them all before a handover. */
export function controllersListener(controllers: readonly Controller[]): ShardListener {
  return {
    onActive: (ranges, fenced) => {
      for (const c of controllers) c.setShardRanges(ranges, fenced);
    },
    drain: async (ranges, signal) => {
      await Promise.all(controllers.map((c) => c.drainShard(ranges, signal)));
    },
  };
}
