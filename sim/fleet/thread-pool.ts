/**
 * Runs tasks on at most `threads` worker threads (the machine has 2 cores), first come first
 * served, or in this thread with `threads: 0` (tests). A task's result must be a pure function
 * of the task, so which worker runs it never changes a result. Workers live until `close()`,
 * keeping what they cached (a capacity search probes one workload many times). The worker side
 * is `serveTasks`. Used by the capacity search's probes and the edge benchmark's replays.
 */
import { parentPort, Worker } from "node:worker_threads";

type Reply<R> = { id: number; result: R } | { id: number; error: string };

interface Pending<T, R> {
  task: T;
  resolve: (r: R) => void;
  reject: (e: Error) => void;
}

export class ThreadPool<T, R> {
  readonly #threads: number;
  readonly #script: URL;
  readonly #runHere: (task: T) => R;
  readonly #idle: Worker[] = [];
  readonly #all: Worker[] = [];
  readonly #queue: { id: number; pending: Pending<T, R> }[] = [];
  readonly #inFlight = new Map<number, Pending<T, R>>();
  #nextId = 0;

  /** `script` calls `serveTasks` with the same function as `runHere`, which `threads: 0` uses. */
  constructor(threads: number, script: URL, runHere: (task: T) => R) {
    this.#threads = threads;
    this.#script = script;
    this.#runHere = runHere;
  }

  run(task: T): Promise<R> {
    if (this.#threads === 0) return Promise.resolve().then(() => this.#runHere(task));
    return new Promise((resolve, reject) => {
      this.#queue.push({ id: this.#nextId++, pending: { task, resolve, reject } });
      this.#dispatch();
    });
  }

  async close(): Promise<void> {
    await Promise.all(this.#all.map((w) => w.terminate()));
    this.#all.length = 0;
    this.#idle.length = 0;
  }

  #dispatch(): void {
    while (this.#queue.length > 0) {
      const worker = this.#idle.pop() ?? this.#spawn();
      if (!worker) return;
      const { id, pending } = this.#queue.shift() as { id: number; pending: Pending<T, R> };
      this.#inFlight.set(id, pending);
      worker.postMessage({ id, task: pending.task });
    }
  }

  #spawn(): Worker | undefined {
    if (this.#all.length >= this.#threads) return undefined;
    const worker = new Worker(this.#script);
    this.#all.push(worker);
    worker.on("message", (reply: Reply<R>) => {
      const pending = this.#inFlight.get(reply.id);
      this.#inFlight.delete(reply.id);
      this.#idle.push(worker);
      if ("error" in reply) pending?.reject(new Error(reply.error));
      else pending?.resolve(reply.result);
      this.#dispatch();
    });
    worker.on("error", (error) => {
      for (const p of this.#inFlight.values()) p.reject(error);
      this.#inFlight.clear();
    });
    return worker;
  }
}

/** In a pool's worker thread: run each task posted, answer its result or a labelled error. */
export function serveTasks<T, R>(run: (task: T) => R, label: (task: T) => string): void {
  parentPort?.on("message", ({ id, task }: { id: number; task: T }) => {
    try {
      parentPort?.postMessage({ id, result: run(task) });
    } catch (error) {
      const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
      parentPort?.postMessage({ id, error: `${label(task)}: ${message}` });
    }
  });
}
