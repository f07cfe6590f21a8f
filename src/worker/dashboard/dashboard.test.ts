import { describe, expect, it } from "vitest";
import { call } from "../test/helpers.ts";

describe("GET /dashboard", () => {
  it("serves the self-contained page under a nonce-only Content-Security-Policy", async () => {
    const res = await call("/dashboard");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const csp = res.headers.get("content-security-policy") ?? "";
    const nonce = /script-src 'nonce-([0-9a-f]{32})'/.exec(csp)?.[1];
    expect(nonce).toBeDefined();
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    const html = await res.text();
    expect(html).not.toContain("__NONCE__");
    expect(html.match(/<script nonce="([0-9a-f]+)">/)?.[1]).toBe(nonce);
    expect(html.match(/<style nonce="([0-9a-f]+)">/)?.[1]).toBe(nonce);
    // Nothing loads from elsewhere: no external script, style, image or font.
    expect(html).not.toMatch(
      /<script[^>]+src=|<link[^>]+href=|url\(|@import|https?:\/\/(?!www\.w3\.org)/,
    );
    expect(html).toContain('fetch("/admin/state"');
  });

  it("a new nonce per response", async () => {
    const a = (await call("/dashboard")).headers.get("content-security-policy");
    const b = (await call("/dashboard")).headers.get("content-security-policy");
    expect(a).not.toBe(b);
  });
});
