/**
 * Which top-level folders may import which. `sim/` holds what the benchmark, the tools and the
 * end-to-end tests share (engine model, traces, arrivals, quantiles, tables, progress bar), so
 * nothing outside `bench/` reaches into the benchmark, and the pure core imports none of them.
 * Relative import specifiers are resolved and checked against the table below.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const repo = resolve(new URL(".", import.meta.url).pathname, "..");

/** Folder -> the folders its files may import (itself included). */
const mayImport: Record<string, readonly string[]> = {
  "src/core": ["src/core"],
  "src/worker": ["src/worker", "src/worker/test", "src/core"],
  /** Test origins and helpers; the end-to-end tests start the same origins in Node. */
  "src/worker/test": ["src/worker/test", "src/worker", "src/core"],
  sim: ["sim", "src/core"],
  /** bench:core also measures the Worker's pure request checks (src/worker/validation). */
  bench: ["bench", "sim", "src/core", "src/worker"],
  tools: ["tools", "sim", "src/core"],
  test: ["test", "tools", "sim", "src/core", "src/worker/test"],
};

/** The folder of `mayImport` a repository path belongs to, if any. */
function folderOf(path: string): string | undefined {
  const parts = relative(repo, path).split("/");
  const key =
    parts[0] !== "src"
      ? (parts[0] as string)
      : parts[1] === "worker" && parts[2] === "test"
        ? "src/worker/test"
        : `src/${parts[1]}`;
  return key in mayImport ? key : undefined;
}

function sources(dir: string): string[] {
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
