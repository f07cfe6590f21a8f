/**
 * Two of the platform globals the core relies on (web-crypto.d.ts declares the other).
 * `TextEncoder` and `TextDecoder` exist in every runtime the core targets (workerd, Node,
 * browsers); declaring them here keeps `lib: ["ES2023"]` free of DOM and Node typings, so
 * nothing else runtime-specific can creep into src/core unnoticed.
 */
declare class TextEncoder {
  encode(input?: string): Uint8Array;
  encodeInto(source: string, destination: Uint8Array): { read: number; written: number };
}

declare class TextDecoder {
  constructor(label?: string, options?: { fatal?: boolean });
  decode(input?: Uint8Array): string;
}
