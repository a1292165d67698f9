// Every message that crosses a thread or frame boundary: extension host ⇄ worker, and
// extension host ⇄ webview (panel, bottom view). Discriminated unions on `type`; each request
// carries an `id` that its reply repeats. Messages from a webview are untrusted: the host
// validates them (see the validators below) before acting.

// ---- extension host ⇄ worker (owned by the extension/worker work) ----

// ---- extension host ⇄ webview (owned by the panel work) ----

export {};
