/**
 * What a policy reads, declared once when it registers (index.ts) and asked by whoever must
 * treat policies differently: the load board (whether to keep in-flight chunks), an edge
 * replica's pick (stale-pick.ts: whether a stale view makes its choice herd) and the
 * simulator's information model (bench/sim/run/information.ts: what its real router is told, and
 * how late). Every field is required, so a policy registered without saying what it reads does
 * not compile (traits.test.ts), and a new policy cannot be missed by a list kept elsewhere.
 */

export interface PolicyTraits {
  /**
   * How its choice reads the origins' load as the router accounts it (requests, tokens or KV
   * blocks in flight):
   * - "least": it takes the least loaded of its best candidates, so replicas reading one stale
   *   view all take the same origin (herding; an edge replica spreads its pick: stale-pick.ts);
   * - "scored": it weighs load into per-origin scores it returns (`Decision.scores`);
   * - "sampled": it compares a random pair only (power of two), which spreads by itself;
   * - "bound": load only bounds a hashed choice (prefix-hash's overflow);
   * - "none": it never reads load.
   */
  readonly load: "least" | "scored" | "sampled" | "bound" | "none";
  /**
   * The engines' load reports its real router takes: this router's signed webhooks; an
   * upstream gateway's scrape (llm-d's, every 50 ms) or poll (SGLang's, every 5 s); or none
   * (its router reads only its own counts).
   */
  readonly loadReports: "webhook" | "scrape" | "poll" | "none";
  /** Its index follows the engines' KV events rather than the router's own claims. */
  readonly kvEvents: boolean;
  /** Its real router sees each request's first token (Dynamo's frontend streams the tokens). */
  readonly firstToken: boolean;
  /** Its choice reads the origins' prefill speed (learned, else the settings' prior). */
  readonly prefillSpeed: boolean;
  /** It reads in-flight prompt chunks (`activeChunks`, `addedChunks`): the board keeps them. */
  readonly activeChunks: boolean;
}
