/**
 * The project's dependency metadata tells the truth: the lockfile holds one wrangler, miniflare
 * and workerd, so the Worker tests run on the workerd that `wrangler dev` and deploy use; the
 * `engines` field asks for a Node at least as new as every locked package needs, and the pinned
 * `node` devDependency (the Node `npm run` and `npx` use) satisfies it.
 */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";

interface Locked {
  version?: string;
  optional?: boolean;
  engines?: { node?: string } | string[];
}

const root = resolve(import.meta.dirname, "..");
const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
  engines: { node: string };
};
const lock = JSON.parse(readFileSync(join(root, "package-lock.json"), "utf8")) as {
  packages: Record<string, Locked>;
};
const locked = Object.entries(lock.packages).filter(([path]) => path !== "");

function lockedVersions(name: string): string[] {
  const paths = locked.filter(([path]) => path.endsWith(`node_modules/${name}`));
  return [...new Set(paths.map(([, p]) => p.version))].sort() as string[];
}

/** The lowest version a range's numbers name, [major, minor, patch]: its floor for the forms
 * packages use (">=22.12.0", "^22.12.0 || ^24.0.0 || >=26.0.0"); null for "*". */
function floor(range: string): number[] | null {
  const versions = [...range.matchAll(/\d+(?:\.\d+){0,2}/g)].map((m) => {
    const [major = 0, minor = 0, patch = 0] = m[0].split(".").map(Number);
    return [major, minor, patch];
  });
  return versions.sort(compare)[0] ?? null;
}

function compare(a: number[], b: number[]): number {
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return (a[i] ?? 0) - (b[i] ?? 0);
  return 0;
}

describe("dependencies", () => {
  it("lock one wrangler, miniflare and workerd (the tests ran on an older workerd than dev and deploy)", () => {
    for (const name of ["wrangler", "miniflare", "workerd"])
      expect({ name, versions: lockedVersions(name) }).toEqual({
        name,
        versions: [expect.any(String)],
      });
  });

  it("name in engines a Node every locked package runs on (it said >=20; wrangler needs 22.12)", () => {
    const ours = floor(manifest.engines.node) as number[];
    const newer = locked.flatMap(([path, p]) => {
      const range = !p.optional && !Array.isArray(p.engines) ? p.engines?.node : undefined;
      const needs = range === undefined ? null : floor(range);
      return needs && compare(needs, ours) > 0 ? [`${path} needs node ${range}`] : [];
    });
    expect(newer).toEqual([]);
  });

  it("pin a node devDependency that satisfies engines", () => {
    const pinned = lock.packages["node_modules/node"]?.version ?? "";
    expect(
      compare(floor(pinned) ?? [0, 0, 0], floor(manifest.engines.node) as number[]),
    ).toBeGreaterThanOrEqual(0);
  });
});
