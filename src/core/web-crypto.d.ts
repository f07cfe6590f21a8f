/**
 * The WebCrypto calls the core makes, and no others: importing an HMAC-SHA256 key, signing and
 * verifying with it (webhook-signature.ts). `crypto.subtle` is the same global in workerd, Node
 * and browsers; declaring only these calls keeps `lib: ["ES2023"]` free of DOM typings and
 * `crypto.getRandomValues`/`randomUUID` out of reach (the core's randomness is a seeded `Rng`).
 */
interface CryptoKey {
  readonly type: string;
}

declare const crypto: {
  readonly subtle: {
    importKey(
      format: "raw",
      keyData: Uint8Array,
      algorithm: { name: "HMAC"; hash: "SHA-256" },
      extractable: boolean,
      keyUsages: ("sign" | "verify")[],
    ): Promise<CryptoKey>;
    sign(algorithm: "HMAC", key: CryptoKey, data: Uint8Array): Promise<ArrayBuffer>;
    verify(
      algorithm: "HMAC",
      key: CryptoKey,
      signature: Uint8Array,
      data: Uint8Array,
    ): Promise<boolean>;
  };
};
