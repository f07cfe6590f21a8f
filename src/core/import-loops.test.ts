/**
 * The core's files import one another in one order: no file imports a file that imports it
 * back, directly or through others, type imports included. sim/imports.test.ts holds the
 * folders of src/ to one order; this holds the files inside them, where a loop means two files
 * share one idea (the radix index's `Eviction` was declared by the index and made by evict.ts,
 * which imported it back). Tests are left out: a test may import whatever it exercises.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const root = new URL(".", import.meta.url).pathname;

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return path.endsWith(".ts") && !path.endsWith(".test.ts") ? [path] : [];
  });
}

/** File -> the core files it imports (relative specifiers, `import type` included). */
function fileGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sources(root)) {
    const code = readFileSync(file, "utf8");
    const specs = [...code.matchAll(/(?:\bfrom|\bimport)\s*\(?\s*["'](\.{1,2}\/[^"']+)["']/g)];
    const targets = specs
      .map((m) => resolve(dirname(file), m[1] as string))
      .filter((t) => t.startsWith(root));
    graph.set(relative(root, file), [...new Set(targets.map((t) => relative(root, t)))]);
  }
  return graph;
}

/** Each strongly connected component of more than one file (Tarjan's algorithm). */
function loops(graph: Map<string, string[]>): string[][] {
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
    for (const w of graph.get(v) ?? []) {
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

describe("src/core file imports", () => {
  const graph = fileGraph();

  it("finds the files and their imports", () => {
    expect(graph.get("router/core-router.ts")).toContain("router/claim-index.ts");
  });

  it("import one another in one order, never in a loop", () => {
    expect(loops(graph)).toEqual([]);
  });
});
