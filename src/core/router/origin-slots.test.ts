import { describe, expect, expectTypeOf, it } from "vitest";
import { asPosition, asSlot, type Position, type Slot } from "../origin-indexes.ts";
import { parsePool } from "../settings/parse-settings.ts";
import { OriginSlots } from "./origin-slots.ts";

const settingsOf = (...ids: string[]) =>
  parsePool({ origins: ids.map((id) => ({ id, url: `http://${id}.test` })) }).origins;

const idsInOrder = (slots: OriginSlots) => slots.order.map((s) => slots.at(s).settings.id);

describe("OriginSlots", () => {
  it("keeps an origin's slot across reorders and gives a left origin's slot to the next new one", () => {
    const slots = new OriginSlots();
    expect(slots.sync(settingsOf("a", "b", "c"))).toEqual([]);
    expect(slots.order).toEqual([0, 1, 2]);
    expect(slots.sync(settingsOf("c", "a"))).toEqual([1]);
    expect(slots.order).toEqual([2, 0]);
    expect(slots.slotAt(asPosition(0))).toBe(2);
    slots.sync(settingsOf("d", "c", "a", "e"));
    expect(slots.order).toEqual([1, 2, 0, 3]);
    expect(idsInOrder(slots)).toEqual(["d", "c", "a", "e"]);
    expect(slots.slotOf("b")).toBeUndefined();
    expect(() => slots.at(asSlot(9))).toThrow(RangeError);
  });

  it("counts requests per origin from when it took its slot", () => {
    const slots = new OriginSlots();
    slots.sync(settingsOf("a", "b"));
    slots.at(asSlot(0)).routed += 3;
    slots.sync(settingsOf("b", "a"));
    expect(slots.at(slots.slotOf("a") as Slot).routed).toBe(3);
    slots.sync(settingsOf("b"));
    slots.sync(settingsOf("b", "c"));
    expect(slots.at(slots.slotOf("c") as Slot).routed).toBe(0);
  });

  it("restores saved slots, returns those of origins gone from settings, fills free slots first", () => {
    const slots = new OriginSlots();
    slots.sync(settingsOf("x"));
    const saved = [
      { slot: 3, id: "a" },
      { slot: 1, id: "gone" },
      { slot: 5, id: "b" },
    ];
    expect(slots.restore(saved, settingsOf("b", "new1", "a", "new2"))).toEqual([1]);
    expect(slots.order).toEqual([5, 0, 3, 1]);
    expect(slots.slotOf("x")).toBeUndefined();
  });

  it("keeps slots and positions apart at compile time", () => {
    expectTypeOf<Position>().not.toExtend<Slot>();
    expectTypeOf<Slot>().not.toExtend<Position>();
    expectTypeOf<number>().not.toExtend<Slot>();
    const slots = new OriginSlots();
    slots.sync(settingsOf("a"));
    // @ts-expect-error a slot is not a position
    expect(slots.slotAt(slots.order[0] as Slot)).toBe(0);
    // @ts-expect-error a position is not a slot
    expect(slots.at(asPosition(0)).settings.id).toBe("a");
  });
});
