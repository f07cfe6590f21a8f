/**
 * CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320, as in zlib and PNG) over bytes.
 * Guards snapshots: it detects every burst error of up to 32 bits, so a flipped or torn byte
 * anywhere in a stored snapshot fails the restore instead of restoring a different index.
 */

let table: Int32Array | undefined;

function crcTable(): Int32Array {
  const t = new Int32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c;
  }
  return t;
}

export function crc32(bytes: Uint8Array, start: number, end: number): number {
  table ??= crcTable();
  let crc = -1;
  for (let i = start; i < end; i++) crc = table[(crc ^ bytes[i]!) & 0xff]! ^ (crc >>> 8);
  return (crc ^ -1) >>> 0;
}
