/**
 * Request bodies shaped to cost the edge the most per byte (issue 9), most at the default
 * `maxBodyBytes` (16 MB): long token-id prompts, many content parts, deep nesting in `tools`,
 * a content part or a field the router ignores, and the shapes that cost JSON.parse the most
 * at the edge of the structural budget (`src/worker/validation/json-budget.ts`).
 */

export interface WorstShape {
  name: string;
  route: "chat" | "completions";
  /** The body's JSON text. */
  body(): string;
}

const MB16 = 16 * 1024 * 1024;
const hi = '{"role":"user","content":"hi"}';

/** `prefix` + items joined by commas + `suffix`, as many items as fit in `bytes`. */
function fill(prefix: string, item: (i: number) => string, suffix: string, bytes = MB16): string {
  const parts = [prefix];
  let length = prefix.length + suffix.length;
  for (let i = 0; ; i++) {
    const next = (i > 0 ? "," : "") + item(i);
    if (length + next.length > bytes) break;
    parts.push(next);
    length += next.length;
  }
  parts.push(suffix);
  return parts.join("");
}

/** A vocabulary-sized token id, spread like real ones. */
const tokenId = (i: number) => (i * 7919) % 128_000;

/** `[[[...]]]` nested `depth` deep. */
const nestedArrays = (depth: number) => "[".repeat(depth) + "]".repeat(depth);

/** A JSON schema nested `depth` objects deep, as tools' parameters are. */
function nestedSchema(depth: number): string {
  let schema = '{"type":"string"}';
  for (let d = 0; d < depth; d++) schema = `{"type":"object","properties":{"p${d}":${schema}}}`;
  return schema;
}

const chat = (extra: string, messages = `[${hi}]`) =>
  `{"model":"m","messages":${messages}${extra ? `,${extra}` : ""}}`;
const deep = (prefix: string, suffix: string) =>
  prefix + nestedArrays((MB16 - prefix.length - suffix.length) >> 1) + suffix;

export const WORST_SHAPES: WorstShape[] = [
  {
    name: "16 MB of token ids",
    route: "completions",
    body: () => fill('{"model":"m","prompt":[', (i) => String(tokenId(i)), "]}"),
  },
  {
    name: "16 MB of token ids, all 0 (8M ids)",
    route: "completions",
    body: () => fill('{"model":"m","prompt":[', () => "0", "]}"),
  },
  {
    name: "16 MB of nested token ids (1,000 a list)",
    route: "completions",
    body: () => {
      const list = `[${Array.from({ length: 1000 }, (_, i) => tokenId(i)).join(",")}]`;
      return fill('{"model":"m","prompt":[', () => list, "]}");
    },
  },
  {
    name: "16 MB of token ids, the last one -1",
    route: "completions",
    body: () => fill('{"model":"m","prompt":[', (i) => String(tokenId(i)), ",-1]}", MB16 - 4),
  },
  {
    name: "100k content parts (16 MB)",
    route: "chat",
    body: () => {
      const text = "lorem ipsum ".repeat(11);
      const part = `{"type":"text","text":"${text}"}`;
      return chat("", `[{"role":"user","content":[${Array(100_000).fill(part).join(",")}]}]`);
    },
  },
  {
    name: "16 MB of tools, schemas 60 deep",
    route: "chat",
    body: () => {
      const description = "Looks things up. ".repeat(800);
      const schema = nestedSchema(60);
      return fill(
        `{"model":"m","messages":[${hi}],"tools":[`,
        (i) =>
          `{"type":"function","function":{"name":"f${i}","description":"${description}","parameters":${schema}}}`,
        "]}",
      );
    },
  },
  {
    name: "deep nesting in tools (8M levels)",
    route: "chat",
    body: () => deep(`{"model":"m","messages":[${hi}],"tools":[`, "]}"),
  },
  {
    name: "deep nesting in a content part",
    route: "chat",
    body: () =>
      deep('{"model":"m","messages":[{"role":"user","content":[{"type":"x","x":', "}]}]}"),
  },
  {
    name: "deep nesting in an ignored field",
    route: "chat",
    body: () => deep(`{"model":"m","messages":[${hi}],"x":`, "}"),
  },
  {
    name: "8M empty arrays in an ignored field",
    route: "chat",
    body: () => fill(`{"model":"m","messages":[${hi}],"x":[`, () => "[]", "]}"),
  },
  {
    name: "262,144 empty arrays (the budget)",
    route: "chat",
    body: () => chat(`"x":[${Array(262_140).fill("[]").join(",")}]`),
  },
  {
    name: "262,144 distinct keys (the budget)",
    route: "chat",
    body: () => {
      const objects = Array.from(
        { length: 65_534 },
        (_, j) => `{${[0, 1, 2, 3].map((k) => `"k${j * 4 + k}":0`).join(",")}}`,
      );
      return chat(`"x":[${objects.join(",")}]`);
    },
  },
  {
    name: "524,288 distinct strings (the budget)",
    route: "chat",
    body: () => chat(`"x":[${Array.from({ length: 524_270 }, (_, i) => `"${i}"`).join(",")}]`),
  },
  {
    name: "16 MB of floats in an ignored field",
    route: "chat",
    body: () => fill(`{"model":"m","messages":[${hi}],"x":[`, (i) => `0.${i % 10}`, "]}"),
  },
];
