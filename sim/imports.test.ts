/**
 * Which top-level folders may import which, in layers: a folder imports only those below it, never
 * back up. `sim/` is the simulator (fleet replay, workloads, engine model, traces, arrivals) and
 * what the benchmarks, the tools and the end-to-end tests share (quantiles, tables, progress bar),
 * so it imports only the pure core, nothing outside `bench/` reaches into the benchmarks, and the
 * pure core imports none of them. `bench/real` alone may use `tools/`: it runs the local stack and
 * real engines. A key naming a file is an entry: a folder allowed it may import that file alone,
 * not the rest of its folder. Relative import specifiers are resolved and checked against the
 * table below.
 *
 * Under `src/`, `sim/` and `tools/`, every folder (each directory, so `http/routes` and
 * `http/middleware` are two) must also sit in one order: no folder imports from a folder that
 * imports it back, directly or through others. A cycle means two folders own one idea between
 * them; the test names each folder of the cycle and the files that make its edges. Tests are
 * left out (a test may import whatever it exercises, and test support imports what it
 * supports); production code may not import a test file, so a test cannot close a cycle that
 * production code runs.
 *
 * In the Worker, a few folders may not import others at all (`mayNotImport`): the two
 * coordination modes never import each other, and the Durable Objects import neither.
 *
 * Inside `src/core`, the files too import one another in one order, type imports included: a
 * loop there means two files share one idea (the radix index's `Eviction` was declared by the
 * index and made by evict.ts, which imported it back).
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const repo = resolve(new URL(".", import.meta.url).pathname, "..");

/** The Worker's pure request checks, the one Worker file code outside the Worker may import. */
const WORKER_VALIDATION = "src/worker/validation/index.ts";

/** Folder (or entry file) -> the folders and entries its files may import (itself included). */
const mayImport: Record<string, readonly string[]> = {
  "src/core": ["src/core"],
  "src/worker": ["src/worker", "src/worker/test", WORKER_VALIDATION, "src/core"],
  [WORKER_VALIDATION]: [WORKER_VALIDATION, "src/worker", "src/core"],
  /** Test origins and helpers; the end-to-end tests start the same origins in Node. */
  "src/worker/test": ["src/worker/test", "src/worker", "src/core"],
  sim: ["sim", "src/core"],
  /** bench:core also measures the Worker's pure request checks, through their entry. */
  bench: ["bench", "sim", "src/core", WORKER_VALIDATION],
  /** bench:real runs the local stack, real engines and replays, which `tools/` owns. */
  "bench/real": ["bench/real", "bench", "sim", "src/core", "tools"],
  tools: ["tools", "sim", "src/core"],
  test: ["test", "tools", "sim", "src/core", "src/worker/test"],
};

/** The folder (or entry) of `mayImport` a repository path belongs to, if any. */
function folderOf(path: string): string | undefined {
  if (relative(repo, path) in mayImport) return relative(repo, path);
  const parts = relative(repo, path).split("/");
  const key =
    parts[0] === "bench" && parts[1] === "real"
      ? "bench/real"
      : parts[0] !== "src"
        ? (parts[0] as string)
        : parts[1] === "worker" && parts[2] === "test"
          ? "src/worker/test"
          : `src/${parts[1]}`;
  return key in mayImport ? key : undefined;
}

function sources(dir: string): string[] {
  if (!statSync(dir).isDirectory()) return [dir];
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return path.endsWith(".ts") ? [path] : [];
  });
}

/** Every `from "./x"` and `import("./x")` specifier that is a relative path. */
function relativeImports(code: string): string[] {
  return [...code.matchAll(/(?:\bfrom|\bimport)\s*\(?\s*["'](\.{1,2}\/[^"']+)["']/g)].map(
    (m) => m[1] as string,
  );
}

describe("folder imports", () => {
  const files = Object.keys(mayImport).flatMap((folder) => sources(join(repo, folder)));

  it("finds sources in every folder", () => {
    const seen = new Set(files.map(folderOf));
    expect([...seen].sort()).toEqual(Object.keys(mayImport).sort());
  });

  it.each(Object.entries(mayImport))("%s imports only from %j", (folder, allowed) => {
    const offenders = files
      .filter((f) => folderOf(f) === folder)
      .flatMap((f) =>
        relativeImports(readFileSync(f, "utf8"))
          .map((spec) => ({ spec, target: folderOf(resolve(dirname(f), spec)) }))
          .filter(({ target }) => target === undefined || !allowed.includes(target))
          .map(({ spec }) => `${relative(repo, f)} -> ${spec}`),
      );
    expect(offenders).toEqual([]);
  });
});

/**
 * Worker folders that must not import one another, tests included (docs/architecture.md, "Two
 * request journeys"): the two coordination modes meet only at coordination/front.ts, sharing
 * what both build through coordination/shared/; the Durable Objects sit below both modes and
 * know neither. A folder here covers its subfolders.
 */
const mayNotImport: readonly (readonly [from: string, to: string])[] = [
  ["src/worker/coordination/object", "src/worker/coordination/edge"],
  ["src/worker/coordination/edge", "src/worker/coordination/object"],
  ["src/worker/objects", "src/worker/coordination"],
];

const within = (path: string, folder: string) => path === folder || path.startsWith(`${folder}/`);

describe("the coordination seam", () => {
  const files = sources(join(repo, "src/worker"));

  it.each(mayNotImport)("%s never imports from %s", (from, to) => {
    const offenders = files
      .filter((f) => within(relative(repo, f), from))
      .flatMap((f) =>
        relativeImports(readFileSync(f, "utf8"))
          .filter((spec) => within(relative(repo, resolve(dirname(f), spec)), to))
          .map((spec) => `${relative(repo, f)} -> ${spec}`),
      );
    expect(offenders).toEqual([]);
  });

  it("finds both modes and the objects", () => {
    for (const [from] of mayNotImport) {
      expect(files.some((f) => within(relative(repo, f), from))).toBe(true);
    }
  });
});

/** Folder -> folder -> the files whose imports make that edge, for production code under `root`. */
function folderGraph(root: string): Map<string, Map<string, string[]>> {
  const graph = new Map<string, Map<string, string[]>>();
  for (const file of sources(join(repo, root))) {
    if (file.endsWith(".test.ts")) continue;
    const from = relative(repo, dirname(file));
    const edges = graph.get(from) ?? new Map<string, string[]>();
    graph.set(from, edges);
    for (const spec of relativeImports(readFileSync(file, "utf8"))) {
      const to = relative(repo, dirname(resolve(dirname(file), spec)));
      if (to === from) continue;
      const files = edges.get(to) ?? [];
      if (!files.includes(relative(repo, file))) files.push(relative(repo, file));
      edges.set(to, files);
    }
  }
  return graph;
}

/** File -> file it imports -> [the importing file], for production code under `root`. */
function fileGraph(root: string): Map<string, Map<string, string[]>> {
  const base = join(repo, root);
  const graph = new Map<string, Map<string, string[]>>();
  for (const file of sources(base)) {
    if (file.endsWith(".test.ts")) continue;
    const from = relative(base, file);
    const edges = new Map<string, string[]>();
    for (const spec of relativeImports(readFileSync(file, "utf8"))) {
      const target = resolve(dirname(file), spec);
      if (target.startsWith(base)) edges.set(relative(base, target), [from]);
    }
    graph.set(from, edges);
  }
  return graph;
}

/** Strongly connected components of more than one node: folders or files (Tarjan's algorithm). */
function cycles(graph: Map<string, Map<string, string[]>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v) as number);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v)?.keys() ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v) as number, index.get(w) as number));
      }
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop() as string;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1) found.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

/** Each cycle of `graph`, as the edges between its folders and the files that make them. */
function describeCycles(graph: Map<string, Map<string, string[]>>): string[][] {
  return cycles(graph).map((component) =>
    component.flatMap((from) =>
      component
        .filter((to) => graph.get(from)?.has(to))
        .map((to) => `${from} -> ${to} (${graph.get(from)?.get(to)?.join(", ")})`),
    ),
  );
}

describe("folders under src/", () => {
  const graph = folderGraph("src");

  it("finds the folders and their imports", () => {
    expect(graph.get("src/core/router")?.has("src/core/radix-index")).toBe(true);
    expect(graph.get("src/worker")?.size).toBeGreaterThan(0);
  });

  it("import one another in one order, never in a cycle", () => {
    expect(describeCycles(graph)).toEqual([]);
  });
});

describe("folders under sim/", () => {
  const graph = folderGraph("sim");

  it("finds the folders and their imports", () => {
    expect(graph.get("sim/edge")?.has("sim/fleet")).toBe(true);
    expect(graph.get("sim/fleet")?.has("sim/engine")).toBe(true);
  });

  it("import one another in one order, never in a cycle", () => {
    expect(describeCycles(graph)).toEqual([]);
  });
});

describe("folders under tools/", () => {
  const graph = folderGraph("tools");

  it("finds the folders and their imports", () => {
    expect(graph.get("tools/start")?.has("tools/llama")).toBe(true);
  });

  it("import one another in one order, never in a cycle", () => {
    expect(describeCycles(graph)).toEqual([]);
  });
});

describe("src/core file imports", () => {
  const graph = fileGraph("src/core");

  it("finds the files and their imports", () => {
    expect([...(graph.get("router/core-router.ts")?.keys() ?? [])]).toContain(
      "router/claim-index.ts",
    );
  });

  it("import one another in one order, never in a loop", () => {
    expect(cycles(graph)).toEqual([]);
  });
});
