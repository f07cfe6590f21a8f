/**
 * The two kinds of integer that name an origin inside the core, as distinct types: passing one
 * where the other is meant fails to type-check instead of routing to the wrong origin.
 *
 * - `Slot`: where an origin's state lives in the radix index and the load board (their
 *   per-origin arrays). An origin keeps its slot while it stays in settings, whatever the order,
 *   so its ownership in the index survives a reorder; a removed origin's slot is reused.
 * - `Position`: where an origin stands in the pool's settings order. It is what policies index
 *   (`PolicyContext.origins`, `matchedTokens`, `Decision.origin`, `ranking`); it changes when
 *   settings reorder or remove origins.
 *
 * `router/origin-slots.ts` maps one to the other. Brands cost nothing at run time; they are
 * minted only where an integer's kind is known (a slot allocated, a policy's decision read).
 */
declare const kind: unique symbol;

export type Slot = number & { readonly [kind]: "slot" };
export type Position = number & { readonly [kind]: "position" };

export const asSlot = (n: number): Slot => n as Slot;
export const asPosition = (n: number): Position => n as Position;
