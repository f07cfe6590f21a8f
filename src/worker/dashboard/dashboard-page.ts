/**
 * @module
 * The dashboard page (dashboard.html, bundled as text by wrangler's default module rules) with
 * a fresh nonce, and the Content-Security-Policy that allows only its own inline style and
 * script and connections to this origin: no external script, style, font or image can load,
 * and injected markup could not run. The page holds no data; it reads `/admin/state` with the
 * token the operator types in.
 */
import page from "./dashboard.html";

const NONCE = /__NONCE__/g;

export interface DashboardPage {
  html: string;
  csp: string;
}

export function dashboardPage(nonce: string): DashboardPage {
  const csp = [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    `style-src 'nonce-${nonce}'`,
    "connect-src 'self'",
    "img-src 'self' data:",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join("; ");
  return { html: page.replace(NONCE, nonce), csp };
}
