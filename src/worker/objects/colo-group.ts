/**
 * Which coordinator of an edge-coordinated pool an isolate syncs with: its colo's group
 * (docs/architecture.md, "The Worker's edge path"). Users keep to a colo and a colo's
 * isolates to a group, so a conversation's turns meet the same coordinator, and a group's
 * coordinator is created in its region (the location hints Cloudflare takes), near its
 * isolates.
 *
 * Region: Workers name the colo (`request.cf.colo`, an airport code) but not its region, and
 * a table of every colo would go stale by hand; the request's `continent` (with `longitude` and
 * `country` to split it) is the visitor's, which anycast sends to a colo of the same region
 * except near borders. North America splits at 100 degrees west (wnam | enam), Europe at 20
 * east (weur | eeur); Asia's Middle East countries are `me`, the rest `apac`; South America
 * `sam`, Oceania `oc`, Africa `afr`. Unknown (local runs, tests): `enam`.
 *
 * Groups: with S coordinators the nine regions merge into S groups of neighbours (GROUPS,
 * S <= 8), or each region has its own (S = 9); past 9, region r owns groups r, r + 9, r + 18...
 * and a colo hashes to one of them, so a busy region spreads over several coordinators while
 * each colo keeps to one.
 */
import { seedHash } from "../../core/chunk-hash.ts";
import type { LOCATION_HINTS } from "../../core/settings/settings-schema.ts";

export type Region = (typeof LOCATION_HINTS)[number];

/** What the group is read from: the request's `cf` properties (absent in local runs). */
export interface ColoProperties {
  readonly colo?: unknown;
  readonly continent?: unknown;
  readonly country?: unknown;
  readonly longitude?: unknown;
}

const REGIONS: readonly Region[] = [
  "wnam",
  "enam",
  "sam",
  "weur",
  "eeur",
  "afr",
  "me",
  "apac",
  "oc",
];

/** For S = 1..8, the regions of each group (neighbours merged; index = group). */
const GROUPS: readonly (readonly (readonly Region[])[])[] = [
  [REGIONS],
  [
    ["wnam", "enam", "sam"],
    ["weur", "eeur", "afr", "me", "apac", "oc"],
  ],
  [
    ["wnam", "enam", "sam"],
    ["weur", "eeur", "afr", "me"],
    ["apac", "oc"],
  ],
  [["wnam"], ["enam", "sam"], ["weur", "eeur", "afr", "me"], ["apac", "oc"]],
  [["wnam"], ["enam", "sam"], ["weur", "afr"], ["eeur", "me"], ["apac", "oc"]],
  [["wnam"], ["enam", "sam"], ["weur", "afr"], ["eeur", "me"], ["apac"], ["oc"]],
  [["wnam"], ["enam"], ["sam"], ["weur", "afr"], ["eeur", "me"], ["apac"], ["oc"]],
  [["wnam"], ["enam"], ["sam"], ["weur"], ["afr"], ["eeur", "me"], ["apac"], ["oc"]],
];

const MIDDLE_EAST = new Set([
  "AE",
  "BH",
  "IL",
  "IQ",
  "IR",
  "JO",
  "KW",
  "LB",
  "OM",
  "PS",
  "QA",
  "SA",
  "SY",
  "YE",
]);

export function regionOf(cf: ColoProperties | undefined): Region {
  const longitude = Number(cf?.longitude);
  switch (cf?.continent) {
    case "NA":
      return longitude < -100 ? "wnam" : "enam";
    case "SA":
      return "sam";
    case "EU":
      return longitude >= 20 ? "eeur" : "weur";
    case "AS":
      return MIDDLE_EAST.has(String(cf.country)) ? "me" : "apac";
    case "OC":
      return "oc";
    case "AF":
      return "afr";
    default:
      return "enam";
  }
}

/** The group (0..coordinators-1) of a request's colo. */
export function coloGroup(cf: ColoProperties | undefined, coordinators: number): number {
  const region = regionOf(cf);
  const groups = GROUPS[coordinators - 1];
  if (groups) return groups.findIndex((g) => g.includes(region));
  const r = REGIONS.indexOf(region);
  const owned = Math.floor((coordinators - 1 - r) / REGIONS.length) + 1;
  const pick = owned === 1 ? 0 : seedHash(String(cf?.colo ?? "")) % owned;
  return r + REGIONS.length * pick;
}

/** Where group `group`'s coordinator is created: its first region, or the pool's hint (S = 1). */
export function groupHint(
  group: number,
  coordinators: number,
  poolHint: Region | undefined,
): Region | undefined {
  if (coordinators === 1) return poolHint;
  const groups = GROUPS[coordinators - 1];
  return groups ? groups[group]?.[0] : REGIONS[group % REGIONS.length];
}
