/**
 * How each of this router's Durable Objects (the pool's object, a coordinator, the edge root)
 * starts: it opens its `SnapshotStore` and loads what it stored inside `blockConcurrencyWhile`,
 * so no call runs before; a failure is remembered, thrown to the next caller, and start-up is
 * tried again then, so a passing storage error does not leave the object dead until eviction.
 */
import { SnapshotStore } from "./snapshot-store.ts";

export class ObjectStart {
  readonly #ctx: DurableObjectState;
  readonly #load: (store: SnapshotStore) => void;
  readonly #what: string;
  #store: SnapshotStore | null = null;
  #failure: unknown = null;

  /** `load` reads the store (settings, marks, snapshot); `what` names the object in errors. */
  constructor(ctx: DurableObjectState, load: (store: SnapshotStore) => void, what: string) {
    this.#ctx = ctx;
    this.#load = load;
    this.#what = what;
  }

  /** Start (from the object's constructor, once this is assigned: `load` may read `store`). */
  begin(): void {
    this.#failure = null;
    void this.#ctx.blockConcurrencyWhile(async () => {
      try {
        this.#store ??= new SnapshotStore(this.#ctx.storage);
        this.#load(this.#store);
      } catch (error) {
        this.#failure = error;
      }
    });
  }

  /** The store once started, else null (for writes that may be skipped, such as marks). */
  get store(): SnapshotStore | null {
    return this.#store;
  }

  /** The store; or the start-up failure, thrown to this caller while another start begins. */
  ready(): SnapshotStore {
    if (this.#failure !== null || !this.#store) {
      const failure = this.#failure;
      this.begin();
      throw failure instanceof Error ? failure : new Error(`${this.#what} failed to start`);
    }
    return this.#store;
  }
}
