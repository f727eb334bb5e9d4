/** A min-heap of (readyAt, item): the delayed half of the work queue. */
export class DelayHeap {
  private readonly heap: { at: number; item: string }[] = [];

  get size(): number {
    return this.heap.length;
  }

  peek(): { at: number; item: string } | undefined {
    return this.heap[0];
  }

  push(at: number, item: string): void {
    const h = this.heap;
    h.push({ at, item });
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (h[p].at <= h[i].at) break;
      [h[p], h[i]] = [h[i], h[p]];
      i = p;
    }
  }

  pop(): { at: number; item: string } | undefined {
    const h = this.heap;
    if (!h.length) return undefined;
    const top = h[0];
    const last = h.pop()!;
    if (h.length) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && h[l].at < h[m].at) m = l;
        if (r < h.length && h[r].at < h[m].at) m = r;
        if (m === i) break;
        [h[m], h[i]] = [h[i], h[m]];
        i = m;
      }
    }
    return top;
  }
}
