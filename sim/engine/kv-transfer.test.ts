import { describe, expect, it } from "vitest";
import { kvTransferMs } from "./kv-transfer.ts";
import { profileNamed } from "./profiles.ts";

describe("kvTransferMs", () => {
  it("moves Llama-3.1-8B's 128 KiB a token over one 400 Gb/s NIC at 80%, plus 1 ms", () => {
    const profile = profileNamed("llama-3.1-8b-h100");
    expect(profile.kvLinkBytesPerSecond).toBe(40e9);
    // 4,096 tokens x 131,072 bytes = 537 MB at 40 GB/s = 13.4 ms.
    expect(kvTransferMs(profile, 4096)).toBeCloseTo(1 + (4096 * 131_072) / 40e6, 9);
    expect(kvTransferMs(profile, 0)).toBe(1);
  });

  it("spreads a TP4 engine's KV over its four NICs", () => {
    const profile = profileNamed("llama-3.1-70b-4xh100");
    expect(profile.kvLinkBytesPerSecond).toBe(160e9);
    // 320 KiB a token: 4,096 tokens in 8.4 ms beyond the fixed 1 ms.
    expect(kvTransferMs(profile, 4096)).toBeCloseTo(1 + (4096 * 327_680) / 160e6, 9);
  });
});
