import { describe, expect, it } from "vitest";
import { formatTable } from "./table.ts";

describe("formatTable", () => {
  it("pads to the widest cell, header included, names left and figures right, with a rule", () => {
    const text = formatTable(
      [
        ["cost", "0.91", "1,204"],
        ["round-robin", "0.2", "9"],
      ],
      { header: ["policy", "hit", "p99 ms"] },
    );
    expect(text.split("\n")).toEqual([
      "policy        hit  p99 ms",
      "-----------  ----  ------",
      "cost         0.91   1,204",
      "round-robin   0.2       9",
    ]);
  });

  it("aligns columns as asked, the rest by default", () => {
    const text = formatTable([["a", "1", "x"]], {
      header: ["name", "value", "unit"],
      align: ["left", "right", "left"],
    });
    expect(text.split("\n")).toEqual([
      "name  value  unit",
      "----  -----  ----",
      "a         1  x   ",
    ]);
  });

  it("prints an empty row as a blank line and has no rule without a header", () => {
    const text = formatTable([["hit", "2 origins"], ["a", "0.5"], [], ["p99", "2 origins"]]);
    expect(text.split("\n")).toEqual(["hit  2 origins", "a          0.5", "", "p99  2 origins"]);
  });
});
