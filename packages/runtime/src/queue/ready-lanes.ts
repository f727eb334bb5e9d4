/**
 * The ready half of the work queue: one FIFO lane per priority, the highest lane served first.
 * An item is held once; queued again at a higher priority it moves up (its old entry is left behind
 * and skipped, known by its sequence number), at the same or a lower one it keeps its place.
 * Priorities are few (low, normal, what reconcilers return), so the lanes are a short sorted list.
 */
export class ReadyLanes {
  private readonly lanes = new Map<number, { entries: { item: string; seq: number }[]; head: number }>();
  /** Lane priorities, highest first. */
  private order: number[] = [];
  private readonly live = new Map<string, { priority: number; seq: number }>();
  private seq = 0;

  get size(): number {
    return this.live.size;
  }

  has(item: string): boolean {
    return this.live.has(item);
  }

  push(item: string, priority: number): void {
    const current = this.live.get(item);
    if (current && current.priority >= priority) return;
    const seq = ++this.seq;
    this.live.set(item, { priority, seq });
    let lane = this.lanes.get(priority);
    if (!lane) {
      lane = { entries: [], head: 0 };
      this.lanes.set(priority, lane);
      this.order = [...this.order, priority].sort((a, b) => b - a);
    }
    lane.entries.push({ item, seq });
  }

  shift(): { item: string; priority: number } | undefined {
    for (const priority of this.order) {
      const lane = this.lanes.get(priority)!; // order lists only existing lanes
      while (lane.head < lane.entries.length) {
        const { item, seq } = lane.entries[lane.head++]!; // head < length: in bounds
        if (this.live.get(item)?.seq !== seq) continue; // moved up since, or already handed out
        this.live.delete(item);
        this.compact(priority, lane);
        return { item, priority };
      }
      this.compact(priority, lane);
    }
    return undefined;
  }

  /** Items in the order they would be handed out. */
  list(): { item: string; priority: number }[] {
    const out: { item: string; priority: number }[] = [];
    for (const priority of this.order) {
      const lane = this.lanes.get(priority)!;
      for (let i = lane.head; i < lane.entries.length; i++) {
        const { item, seq } = lane.entries[i]!;
        if (this.live.get(item)?.seq === seq) out.push({ item, priority });
      }
    }
    return out;
  }

  private compact(priority: number, lane: { entries: unknown[]; head: number }) {
    if (lane.head >= lane.entries.length) {
      this.lanes.delete(priority);
      this.order = this.order.filter((p) => p !== priority);
    } else if (lane.head > 1024 && lane.head * 2 > lane.entries.length) {
      lane.entries.splice(0, lane.head);
      lane.head = 0;
    }
  }
}
