/**
 * Origin slots: which slot (of the radix index and the load board) each origin id holds, and
 * the pool's settings order over them, `order[position]` = slot (origin-indexes.ts). An origin
 * keeps its slot while it stays in settings, so its ownership in the index survives a reorder;
 * a removed origin's slot goes to the next new origin, lowest first.
 *
 * `sync` follows new settings and `restore` takes the slots a snapshot recorded; both return
 * the slots they gave up, which the caller clears in the index, the board and everything else
 * it files by slot before any other origin takes them.
 */
import { asSlot, type Position, type Slot } from "../origin-indexes.ts";
import type { OriginSettings } from "../settings/settings-schema.ts";

export interface OriginSlot {
  settings: OriginSettings;
  /** Requests leased to the origin since it took the slot. */
  routed: number;
}

/** Where a snapshot filed an origin. */
export interface SavedSlot {
  readonly slot: number;
  readonly id: string;
}

export class OriginSlots {
  #bySlot: (OriginSlot | undefined)[] = [];
  #slotOf = new Map<string, Slot>();
  #order: Slot[] = [];

  /** Slots in settings order: `order[position]`. */
  get order(): readonly Slot[] {
    return this.#order;
  }

  slotAt(position: Position): Slot {
    return this.#order[position] as Slot;
  }

  slotOf(id: string): Slot | undefined {
    return this.#slotOf.get(id);
  }

  /** The origin in `slot` (one of `order`, or a slot `slotOf` gave). */
  at(slot: Slot): OriginSlot {
    const origin = this.#bySlot[slot];
    if (!origin) throw new RangeError(`no origin in slot ${slot}`);
    return origin;
  }

  /**
   * Follow settings: origins that stay keep their slot and take their new settings, new ones
   * take free slots. Returns the slots of origins that left, in the order they came.
   */
  sync(origins: readonly OriginSettings[]): Slot[] {
    const keep = new Set(origins.map((o) => o.id));
    const left: Slot[] = [];
    for (const [id, slot] of this.#slotOf) {
      if (keep.has(id)) continue;
      this.#bySlot[slot] = undefined;
      this.#slotOf.delete(id);
      left.push(slot);
    }
    this.#order = origins.map((settings) => {
      const slot = this.#slotOf.get(settings.id);
      if (slot === undefined) return this.#add(settings);
      (this.#bySlot[slot] as OriginSlot).settings = settings;
      return slot;
    });
    return left;
  }

  /**
   * Start again from a snapshot's slots (`routed` from zero): origins still in `origins` get
   * their saved slot back; the saved slots of the others are returned. Origins the snapshot did
   * not know get free slots.
   */
  restore(saved: readonly SavedSlot[], origins: readonly OriginSettings[]): Slot[] {
    const settingsOf = new Map(origins.map((o) => [o.id, o]));
    this.#bySlot = [];
    this.#slotOf.clear();
    const stale: Slot[] = [];
    for (const { slot, id } of saved) {
      const settings = settingsOf.get(id);
      if (settings) this.#set(asSlot(slot), settings);
      else stale.push(asSlot(slot));
    }
    this.sync(origins);
    return stale;
  }

  /** Test-only: throws unless the slots are exactly `origins`, in order, each found by id. */
  checkInvariants(origins: readonly OriginSettings[]): void {
    const ids = this.#order.map((slot) => this.at(slot).settings.id);
    if (ids.join() !== origins.map((o) => o.id).join())
      throw new Error("origin slots: not in settings order");
    for (const slot of this.#order) {
      if (this.#slotOf.get(this.at(slot).settings.id) !== slot)
        throw new Error(`origin slots: ${slot} not found by id`);
    }
    const held = this.#bySlot.filter((o) => o !== undefined).length;
    if (this.#slotOf.size !== ids.length || held !== ids.length)
      throw new Error("origin slots: stray slots");
  }

  #add(settings: OriginSettings): Slot {
    // findIndex, not indexOf: a restored array has holes, which indexOf skips.
    const free = this.#bySlot.findIndex((s) => !s);
    return this.#set(asSlot(free < 0 ? this.#bySlot.length : free), settings);
  }

  #set(slot: Slot, settings: OriginSettings): Slot {
    this.#bySlot[slot] = { settings, routed: 0 };
    this.#slotOf.set(settings.id, slot);
    return slot;
  }
}
