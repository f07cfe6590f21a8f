/**
 * Where an SGLang prefill engine and a decode engine meet (SGLang's bootstrap server, at the
 * prefill's `--disaggregation-bootstrap-port`): by `bootstrap_room`. The prefill puts the room's
 * KV once it has computed it and waits for a decode to take it; a decode waits for the room's KV
 * and takes it. Either side gives up after the bootstrap timeout. Legs arrive in any order (the
 * router sends them at once), so whichever comes first waits for the other.
 */

/** What moves from the prefill engine to the decode engine. */
export interface RoomKv {
  readonly hashes: number[];
  readonly promptTokens: number;
  /** The prefill engine's own prefix-cache hit; SGLang's decode reports it as its own. */
  readonly cachedTokens: number;
}

interface Room {
  kv: RoomKv | null;
  onKv: ((kv: RoomKv) => void)[];
  taken: boolean;
  onTaken: (() => void)[];
}

/** Resolves with `value`, or null after `ms` or when `signal` aborts. */
function within<T>(wait: (done: (value: T) => void) => void, ms: number, signal?: AbortSignal) {
  return new Promise<T | null>((resolve) => {
    const timer = setTimeout(() => resolve(null), ms);
    const end = (value: T | null) => {
      clearTimeout(timer);
      resolve(value);
    };
    signal?.addEventListener("abort", () => end(null), { once: true });
    wait(end);
  });
}

export class Rooms {
  readonly #rooms = new Map<number, Room>();

  readonly timeoutMs: number;

  constructor(timeoutMs: number) {
    this.timeoutMs = timeoutMs;
  }

  get size(): number {
    return this.#rooms.size;
  }

  #room(id: number): Room {
    let room = this.#rooms.get(id);
    if (!room) {
      room = { kv: null, onKv: [], taken: false, onTaken: [] };
      this.#rooms.set(id, room);
    }
    return room;
  }

  /** The prefill side: the room's KV is ready; true once a decode took it, false on timeout. */
  async put(id: number, kv: RoomKv): Promise<boolean> {
    const room = this.#room(id);
    room.kv = kv;
    for (const waiter of room.onKv.splice(0)) waiter(kv);
    const taken =
      room.taken ||
      (await within<true>((done) => room.onTaken.push(() => done(true)), this.timeoutMs)) === true;
    this.#rooms.delete(id);
    return taken;
  }

  /** The decode side: the room's KV once the prefill has put it, or null on timeout or abort. */
  async take(id: number, signal: AbortSignal): Promise<RoomKv | null> {
    const room = this.#room(id);
    const kv =
      room.kv ?? (await within<RoomKv>((done) => room.onKv.push(done), this.timeoutMs, signal));
    if (kv === null || signal.aborted) {
      if (room.kv === null) this.#rooms.delete(id);
      return null;
    }
    room.taken = true;
    for (const waiter of room.onTaken.splice(0)) waiter();
    return kv;
  }
}
