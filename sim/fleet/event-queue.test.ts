import { describe, expect, it } from "vitest";
import { EventQueue } from "./event-queue.ts";

describe("EventQueue", () => {
  it("pops by time, then kind, then insertion order", () => {
    const q = new EventQueue();
    q.push(5, 2, 0);
    q.push(1, 3, 1);
    q.push(5, 1, 2);
    q.push(5, 2, 3);
    q.push(0, 9, 4);
    const order: number[] = [];
    while (q.size > 0) order.push(q.pop()?.origin as number);
    expect(order).toEqual([4, 1, 2, 0, 3]);
    expect(q.peekTime()).toBe(Number.POSITIVE_INFINITY);
  });

  it("stays ordered over many random pushes and pops", () => {
    const q = new EventQueue();
    let x = 1;
    const times: number[] = [];
    for (let i = 0; i < 500; i++) {
      x = (x * 48271) % 2147483647;
      q.push(x % 100, 0, i);
      if (i % 3 === 0) times.push(q.pop()?.t as number);
    }
    let last = -1;
    while (q.size > 0) {
      const t = q.pop()?.t as number;
      expect(t).toBeGreaterThanOrEqual(last);
      last = t;
    }
    expect(times.length).toBeGreaterThan(0);
  });
});
