/** Deterministic filler output: token i of a request is the same text on every run. */
const WORDS = [
  "alpha",
  "bravo",
  "charlie",
  "delta",
  "echo",
  "foxtrot",
  "golf",
  "hotel",
  "india",
  "juliet",
];

export function fillerTokens(seed: number, from: number, count: number): string {
  let text = "";
  for (let i = from; i < from + count; i++) text += `${WORDS[(seed * 31 + i * 7) % WORDS.length]} `;
  return text;
}
