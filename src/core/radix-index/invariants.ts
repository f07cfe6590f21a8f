/**
 * Structural invariants of the radix index, checked in full. Two callers: `restore` runs it on
 * every rebuilt snapshot (the validation that rejects a snapshot whose bytes decode but do not
 * describe a valid index, see `image.ts`), and tests run it after every operation through
 * `RadixIndex.checkInvariants`. Throws an Error naming the first broken invariant.
 *
 * O(size) time and allocation: never call it on a hot path.
 */

import { FREE_NODE, NONE, type RadixStore, ROOT } from "./store.ts";

export function checkInvariants(s: RadixStore, maxChunks: number): void {
  const fail = (msg: string): never => {
    throw new Error(`radix index invariant broken: ${msg}`);
  };

  // Free lists: disjoint from live slots, and live + free = allocated.
  let freeChunks = 0;
  for (let c = s.chunkFreeHead; c !== NONE; c = s.nextFreeChunk(c)) {
    if (c < 0 || c >= s.chunkHighWater) fail(`free chunk ${c} out of range`);
    if (s.chunkNode[c] !== NONE) fail(`free chunk ${c} is live`);
    if (++freeChunks > s.chunkHighWater) fail("chunk free list loops");
  }
  let liveChunks = 0;
  for (let c = 0; c < s.chunkHighWater; c++) if (s.chunkNode[c] !== NONE) liveChunks++;
  if (liveChunks !== s.chunks) fail(`chunk count ${s.chunks} but ${liveChunks} live`);
  if (liveChunks + freeChunks !== s.chunkHighWater) fail("chunks neither live nor free");
  if (s.chunks > maxChunks) fail(`${s.chunks} chunks over the budget ${maxChunks}`);

  let freeNodes = 0;
  for (let n = s.nodeFreeHead; n !== NONE; n = s.nextFreeNode(n)) {
    if (n <= ROOT || n >= s.nodeHighWater) fail(`free node ${n} out of range`);
    if (s.nodeParent[n] !== FREE_NODE) fail(`free node ${n} is live`);
    if (++freeNodes > s.nodeHighWater) fail("node free list loops");
  }
  let liveNodes = 0;
  for (let n = 1; n < s.nodeHighWater; n++) if (s.nodeParent[n] !== FREE_NODE) liveNodes++;
  if (liveNodes !== s.nodes) fail(`node count ${s.nodes} but ${liveNodes} live`);
  if (liveNodes + freeNodes + 1 !== s.nodeHighWater) fail("nodes neither live nor free");

  let freeEntries = 0;
  for (let e = s.entryFreeHead; e !== NONE; e = s.nextFreeEntry(e)) {
    if (e < 0 || e >= s.entryHighWater) fail(`free entry ${e} out of range`);
    if (s.entryNode[e] !== NONE) fail(`free entry ${e} is live`);
    if (++freeEntries > s.entryHighWater) fail("entry free list loops");
  }
  let liveEntries = 0;
  for (let e = 0; e < s.entryHighWater; e++) if (s.entryNode[e] !== NONE) liveEntries++;
  if (liveEntries !== s.entries) fail(`entry count ${s.entries} but ${liveEntries} live`);
  if (liveEntries + freeEntries !== s.entryHighWater) fail("entries neither live nor free");

  // Table: sound (its own check: no index twice) and holding exactly the live chunks, since
  // every index it holds is live and it holds as many as there are.
  try {
    s.table.checkInvariants(s.chunkHash);
  } catch (err) {
    fail((err as Error).message);
  }
  const slots = s.table.slots;
  for (let i = 0; i < slots.length; i++) {
    const c = slots[i]!;
    if (c !== NONE && s.chunkNode[c] === NONE) fail(`table slot ${i} -> dead ${c}`);
  }
  if (s.table.count !== s.chunks) fail("table size != chunk count");

  // Tree: reachable from the root, links consistent, labels agree with lengths and depths.
  if (s.nodeParent[ROOT] !== NONE || s.nodeLen[ROOT] !== 0 || s.nodeFirstEntry[ROOT] !== NONE) {
    fail("root sentinel altered");
  }
  const entryPos = new Int32Array(s.entryHighWater).fill(NONE);
  let reached = 0;
  let chunksInNodes = 0;
  let entriesInNodes = 0;
  const stack = [ROOT];
  while (stack.length > 0) {
    const p = stack.pop()!;
    const childStart = s.nodeStart[p]! + s.nodeLen[p]!;
    let prev = NONE;
    for (let n = s.nodeFirstChild[p]!; n !== NONE; n = s.nodeNextSibling[n]!) {
      if (++reached > s.nodes) fail("more nodes reachable than live");
      if (s.nodeParent[n] !== p) fail(`node ${n}'s parent is not ${p}`);
      if (s.nodePrevSibling[n] !== prev) fail(`node ${n}'s prev sibling is wrong`);
      if (s.nodeStart[n] !== childStart) fail(`node ${n} starts at the wrong depth`);
      const len = s.nodeLen[n]!;
      if (len < 1) fail(`node ${n} is empty`);
      let count = 0;
      for (let c = s.nodeFirstChunk[n]!; c !== NONE; c = s.chunkNextInLabel[c]!) {
        if (s.chunkNode[c] !== n) fail(`chunk ${c} in node ${n}'s label points elsewhere`);
        if (s.chunkDepth[c] !== childStart + count) fail(`chunk ${c} has the wrong depth`);
        if (++count > len) fail(`node ${n}'s label is longer than ${len}`);
      }
      if (count !== len) fail(`node ${n} has ${count} chunks, length ${len}`);
      chunksInNodes += count;
      checkEntries(s, n, entryPos, fail);
      for (let e = s.nodeFirstEntry[n]!; e !== NONE; e = s.entryNextInNode[e]!) entriesInNodes++;
      prev = n;
      stack.push(n);
    }
  }
  if (reached !== s.nodes) fail(`${s.nodes - reached} live nodes unreachable`);
  if (chunksInNodes !== s.chunks) fail("chunks outside any node label");
  if (entriesInNodes !== s.entries) fail("live entries outside any node");

  checkOrigins(s, entryPos, fail);
}

/** One node's entries: one per origin, lengths in range, the node fully held, prefix closure. */
function checkEntries(
  s: RadixStore,
  n: number,
  entryPos: Int32Array,
  fail: (msg: string) => never,
): void {
  const len = s.nodeLen[n]!;
  const parent = s.nodeParent[n]!;
  let held = 0;
  if (s.nodeFirstEntry[n] === NONE) fail(`node ${n} has no entry`);
  for (let e = s.nodeFirstEntry[n]!; e !== NONE; e = s.entryNextInNode[e]!) {
    if (s.entryNode[e] !== n) fail(`entry ${e} listed on node ${n} points elsewhere`);
    if (entryPos[e] !== NONE) fail(`entry ${e} listed twice`);
    entryPos[e] = 0;
    const o = s.entryOrigin[e]!;
    if (o >= s.maxOrigins) fail(`entry ${e} has origin ${o} out of range`);
    if (s.findEntry(n, o) !== e) fail(`node ${n} has two entries for origin ${o}`);
    const l = s.entryLen[e]!;
    if (l < 1 || l > len) fail(`entry ${e} owns ${l} of ${len} chunks`);
    if (l > held) held = l;
    if (parent !== ROOT) {
      const up = s.findEntry(parent, o);
      if (up === NONE) fail(`origin ${o} holds node ${n} but not its parent (not prefix-closed)`);
      if (s.entryLen[up] !== s.nodeLen[parent]) {
        fail(`origin ${o} owns a child of node ${parent} but only part of it`);
      }
    }
  }
  if (held !== len) fail(`node ${n} has ${len} chunks but its entries hold ${held}`);
}

/** Per origin: LRU list links, owned counts, active set, capacity, and leaves-oldest order. */
function checkOrigins(s: RadixStore, entryPos: Int32Array, fail: (msg: string) => never): void {
  let ownerships = 0;
  let listed = 0;
  let active = 0;
  for (let o = 0; o < s.maxOrigins; o++) {
    let sum = 0;
    let pos = 0;
    let prev = NONE;
    for (let e = s.lruHead[o]!; e !== NONE; e = s.entryLruNext[e]!) {
      if (s.entryNode[e] === NONE) fail(`origin ${o}'s LRU list holds free entry ${e}`);
      if (s.entryOrigin[e] !== o) fail(`entry ${e} is in origin ${o}'s LRU list`);
      if (s.entryLruPrev[e] !== prev) fail(`entry ${e}'s LRU prev link is wrong`);
      if (entryPos[e] !== 0) fail(`entry ${e} is listed twice in LRU lists`);
      entryPos[e] = ++pos;
      sum += s.entryLen[e]!;
      prev = e;
      if (++listed > s.entries) fail("LRU lists loop");
    }
    if (s.lruTail[o] !== prev) fail(`origin ${o}'s LRU tail is wrong`);
    if (s.owned[o] !== sum) fail(`origin ${o} owned ${s.owned[o]} but its entries sum to ${sum}`);
    if (sum > s.capacity[o]!) fail(`origin ${o} owns ${sum} over capacity ${s.capacity[o]}`);
    const isActive = s.activePos[o] !== NONE;
    if (isActive !== sum > 0) fail(`origin ${o}'s active flag is wrong`);
    if (isActive) {
      active++;
      if (s.active[s.activePos[o]!] !== o) fail(`origin ${o}'s active slot is wrong`);
    }
    ownerships += sum;
  }
  if (listed !== s.entries) fail("live entries missing from LRU lists");
  if (active !== s.activeCount) fail("active origin count is wrong");
  if (ownerships !== s.ownerships) fail("ownership total is wrong");

  // An ancestor is always more recent than its descendants for the same origin.
  for (let e = 0; e < s.entryHighWater; e++) {
    const n = s.entryNode[e]!;
    if (n === NONE) continue;
    const parent = s.nodeParent[n]!;
    if (parent === ROOT) continue;
    const up = s.findEntry(parent, s.entryOrigin[e]!);
    if (entryPos[up]! <= entryPos[e]!) fail(`entry ${e} is more recent than its parent's entry`);
  }
}
