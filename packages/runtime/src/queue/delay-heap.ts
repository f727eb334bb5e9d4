/** A min-heap of (readyAt, item): the delayed half of the work queue. */
export class DelayHeap {
  private readonly heap: { at: number; item: string }[] = [];

  get size(): number {
    return this.heap.length;
  }

  peek(): { at: number; item: string } | undefined {
    return this.heap[0];
  }

  /** When the entry at heap index `i` (in bounds) is due. */
  private at(i: number): number {
    return this.heap[i]!.at;
  }

  private swap(i: number, j: number): void {
    const h = this.heap;
    [h[i], h[j]] = [h[j]!, h[i]!];
  }

  push(at: number, item: string): void {
    this.heap.push({ at, item });
    let i = this.heap.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (this.at(p) <= this.at(i)) break;
      this.swap(p, i);
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
        if (l < h.length && this.at(l) < this.at(m)) m = l;
        if (r < h.length && this.at(r) < this.at(m)) m = r;
        if (m === i) break;
        this.swap(m, i);
        i = m;
      }
    }
    return top;
  }
}
