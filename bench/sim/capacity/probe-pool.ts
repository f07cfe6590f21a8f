/**
 * Runs probes on at most `threads` worker threads (the machine has 2 cores), first come first
 * served, or in this thread with `threads: 0` (tests). Each probe is a pure function of its task,
 * so the order in which workers pick them up never changes a result. Workers live until
 * `close()`, keeping the workloads they built, since a search probes one workload many times.
 */
import { Worker } from "node:worker_threads";
import type { Workload } from "../workload/workload.ts";
import { type ProbeRecord, type ProbeTask, runProbe } from "./probe.ts";
import { baseWorkload } from "./workload-cache.ts";

type Reply = { id: number; record: ProbeRecord } | { id: number; error: string };

interface Pending {
  task: ProbeTask;
  resolve: (r: ProbeRecord) => void;
  reject: (e: Error) => void;
}

export class ProbePool {
  readonly #threads: number;
  readonly #idle: Worker[] = [];
  readonly #all: Worker[] = [];
  readonly #queue: { id: number; pending: Pending }[] = [];
  readonly #inFlight = new Map<number, Pending>();
  readonly #cache = new Map<string, Workload>();
  #nextId = 0;

  constructor(threads: number) {
    this.#threads = threads;
  }

  run(task: ProbeTask): Promise<ProbeRecord> {
    if (this.#threads === 0) {
      return Promise.resolve().then(() => runProbe(baseWorkload(this.#cache, task.spec), task));
    }
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
      const { id, pending } = this.#queue.shift() as { id: number; pending: Pending };
      this.#inFlight.set(id, pending);
      worker.postMessage({ id, task: pending.task });
    }
  }

  #spawn(): Worker | undefined {
    if (this.#all.length >= this.#threads) return undefined;
    const worker = new Worker(new URL("./probe-worker.ts", import.meta.url));
    this.#all.push(worker);
    worker.on("message", (reply: Reply) => {
      const pending = this.#inFlight.get(reply.id);
      this.#inFlight.delete(reply.id);
      this.#idle.push(worker);
      if ("error" in reply) pending?.reject(new Error(reply.error));
      else pending?.resolve(reply.record);
      this.#dispatch();
    });
    worker.on("error", (error) => {
      for (const p of this.#inFlight.values()) p.reject(error);
      this.#inFlight.clear();
    });
    return worker;
  }
}
