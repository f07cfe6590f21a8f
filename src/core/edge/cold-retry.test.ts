/**
 * Bug: a cold replica (no answer yet) whose coordinator does not answer wanted to sync again at
 * once after every failure: the Worker's sync loop then called a down coordinator in a tight
 * loop for as long as its `waitUntil` lived (136,821 failed syncs in 25 s in a workerd test).
 * The same held for a warm replica once `flushRecords` records waited, which an outage brings.
 * Cold or warm, however many records wait, failures back off.
 */
import { describe, expect, it } from "vitest";
import { policyOf } from "../policies/index.ts";
import { parsePool } from "../settings/parse-settings.ts";
import { EdgeReplica } from "./edge-replica.ts";

const pool = parsePool({
  origins: ["a", "b"].map((id) => ({ id, url: `http://${id}.test` })),
  policy: policyOf("cost"),
  coordination: "edge",
  edge: { flushMs: 100, flushRecords: 2 },
});

describe("a cold replica whose coordinator does not answer", () => {
  it("retries with backoff, not at once", () => {
    const replica = new EdgeReplica(pool, { model: "m", isolate: "i" });
    expect(replica.nextSyncAt(0)).toBe(0);
    const waits: number[] = [];
    let now = 0;
    for (let failure = 0; failure < 6; failure++) {
      replica.startSync(now);
      replica.onFailure(now);
      const next = replica.nextSyncAt(now) as number;
      waits.push(next - now);
      now = next;
    }
    expect(waits).toEqual([100, 200, 400, 800, 1600, 2000]);
  });

  it("a warm replica with flushRecords records waiting backs off as well", () => {
    const replica = new EdgeReplica(pool, { model: "m", isolate: "i" });
    replica.startSync(0);
    replica.onAnswer(
      {
        epoch: "e",
        version: 0,
        duplicate: false,
        bootstrap: null,
        records: [],
        load: [],
        bytesPerToken: { bytesPerToken: 4, samples: 0 },
        rate: { requestsPerSecond: 0, meanPrefillWork: 0 },
        hot: [],
      },
      0,
    );
    let now = 10;
    replica.startSync(now);
    replica.onFailure(now);
    for (let k = 0; k < 3; k++) {
      replica.route({ chunkHashes: [k + 1], promptTokens: 64 }, now);
    }
    expect(replica.waiting.records).toBeGreaterThanOrEqual(2);
    expect(replica.nextSyncAt(now)).toBe(now + 100);
    now += 100;
    replica.startSync(now);
    replica.onFailure(now);
    expect(replica.nextSyncAt(now)).toBe(now + 200);
  });
});
