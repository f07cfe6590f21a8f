import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type ColoProperties, coloGroup, groupHint, type Region, regionOf } from "./colo-group.ts";

const cf = fc.record({
  colo: fc.constantFrom("IAD", "SJC", "LHR", "WAW", "NRT", "SYD", "GRU", "JNB", "DXB", "ORD"),
  continent: fc.constantFrom("NA", "SA", "EU", "AS", "OC", "AF", "AN", undefined),
  country: fc.constantFrom("US", "AE", "JP", "DE", "IL", undefined),
  longitude: fc.option(fc.double({ min: -180, max: 180, noNaN: true }), { nil: undefined }),
});

describe("colo groups", () => {
  it("reads the region from the visitor's continent, longitude and country", () => {
    expect(regionOf({ continent: "NA", longitude: -122.4 })).toBe("wnam");
    expect(regionOf({ continent: "NA", longitude: -77 })).toBe("enam");
    expect(regionOf({ continent: "EU", longitude: 21 })).toBe("eeur");
    expect(regionOf({ continent: "EU", longitude: -0.1 })).toBe("weur");
    expect(regionOf({ continent: "AS", country: "AE" })).toBe("me");
    expect(regionOf({ continent: "AS", country: "JP" })).toBe("apac");
    // Local runs and tests have no `cf`.
    expect(regionOf(undefined)).toBe("enam");
  });

  it("every colo maps to one group in 0..S-1, always the same, created in its own region", () => {
    fc.assert(
      fc.property(cf, fc.integer({ min: 1, max: 64 }), (props: ColoProperties, s) => {
        const group = coloGroup(props, s);
        expect(group).toBeGreaterThanOrEqual(0);
        expect(group).toBeLessThan(s);
        expect(coloGroup({ ...props }, s)).toBe(group);
        // A group is created in a region of its own (S = 1: where the pool's hint says).
        const hint = groupHint(group, s, "weur");
        if (s === 1) {
          expect(hint).toBe("weur");
        } else {
          const visitor = REGION_VISITORS[hint as Region];
          const home = coloGroup({ ...visitor, colo: props.colo }, s);
          if (s <= 9) expect(home).toBe(group);
          else expect(home % 9).toBe(group % 9);
        }
      }),
    );
  });

  it("with S <= 9 neighbours share a coordinator and every group has a region", () => {
    for (let s = 1; s <= 9; s++) {
      const used = new Set(Object.values(REGION_VISITORS).map((v) => coloGroup(v, s)));
      expect(used.size).toBe(s);
    }
    // Two coordinators: the Americas apart from the rest.
    expect(coloGroup({ continent: "NA", longitude: -122 }, 2)).toBe(0);
    expect(coloGroup({ continent: "SA" }, 2)).toBe(0);
    expect(coloGroup({ continent: "EU", longitude: 2 }, 2)).toBe(1);
  });

  it("past 9, a region's colos spread over its several coordinators", () => {
    const colos = ["IAD", "EWR", "ATL", "MIA", "BOS", "YYZ", "ORD", "DFW", "CLT", "PHL"];
    const groups = new Set(colos.map((colo) => coloGroup({ colo, continent: "NA" }, 27)));
    expect([...groups].every((g) => g % 9 === 1)).toBe(true);
    expect(groups.size).toBeGreaterThan(1);
  });
});

/** A visitor from each of the nine regions. */
const REGION_VISITORS: Record<Region, ColoProperties> = {
  wnam: { continent: "NA", longitude: -122 },
  enam: { continent: "NA", longitude: -77 },
  sam: { continent: "SA" },
  weur: { continent: "EU", longitude: 2 },
  eeur: { continent: "EU", longitude: 25 },
  afr: { continent: "AF" },
  me: { continent: "AS", country: "AE" },
  apac: { continent: "AS", country: "JP" },
  oc: { continent: "OC" },
};
