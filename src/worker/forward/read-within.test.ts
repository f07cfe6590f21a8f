import { describe, expect, it } from "vitest";
import { readWithin } from "./read-within.ts";

function controlled() {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const stream = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
    },
  });
  return { reader: stream.getReader(), controller };
}

describe("readWithin", () => {
  it("the chunk that arrives in time", async () => {
    const { reader, controller } = controlled();
    setTimeout(() => controller.enqueue(new Uint8Array([7])), 5);
    expect(await readWithin(reader, 1000)).toEqual({ done: false, value: new Uint8Array([7]) });
  });

  it("null when nothing arrives in time", async () => {
    const { reader } = controlled();
    expect(await readWithin(reader, 20)).toBeNull();
  });

  it("the stream's error when it fails in time", async () => {
    const { reader, controller } = controlled();
    setTimeout(() => controller.error(new Error("lost")), 5);
    await expect(readWithin(reader, 1000)).rejects.toThrow("lost");
  });

  it("a read that fails after its deadline is no unhandled rejection", async () => {
    const { reader, controller } = controlled();
    expect(await readWithin(reader, 10)).toBeNull();
    controller.error(new Error("late"));
    // vitest fails the run on an unhandled rejection; give one the chance to surface.
    await new Promise((resolve) => setTimeout(resolve, 20));
    await expect(reader.closed).rejects.toThrow("late");
  });
});
