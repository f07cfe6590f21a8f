/**
 * The simulator's agenda: a binary min-heap of events by time, then kind, then insertion order,
 * so simultaneous events always run in the same order and a seed replays a run exactly.
 */
export interface SimEvent {
  readonly t: number;
  /** Lower runs first among events at the same time. */
  readonly kind: number;
  readonly seq: number;
  readonly origin: number;
  readonly version: number;
  readonly payload?: unknown;
}

function before(a: SimEvent, b: SimEvent): boolean {
  return a.t < b.t || (a.t === b.t && (a.kind < b.kind || (a.kind === b.kind && a.seq < b.seq)));
}

export class EventQueue {
  #heap: SimEvent[] = [];
  #seq = 0;

  get size(): number {
    return this.#heap.length;
  }

  /** Time of the next event, or Infinity when empty. */
  peekTime(): number {
    return this.#heap[0]?.t ?? Number.POSITIVE_INFINITY;
  }

  push(t: number, kind: number, origin: number, version = 0, payload?: unknown): void {
    const h = this.#heap;
    const event: SimEvent = { t, kind, seq: this.#seq++, origin, version, payload };
    let i = h.length;
    h.push(event);
    while (i > 0) {
      const parent = (i - 1) >>> 1;
      if (!before(event, h[parent] as SimEvent)) break;
      h[i] = h[parent] as SimEvent;
      i = parent;
    }
    h[i] = event;
  }

  pop(): SimEvent | undefined {
    const h = this.#heap;
    const top = h[0];
    const last = h.pop();
    if (h.length === 0 || last === undefined) return top;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= h.length) break;
      const r = l + 1;
      const c = r < h.length && before(h[r] as SimEvent, h[l] as SimEvent) ? r : l;
      if (!before(h[c] as SimEvent, last)) break;
      h[i] = h[c] as SimEvent;
      i = c;
    }
    h[i] = last;
    return top;
  }
}
