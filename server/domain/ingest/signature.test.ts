import { describe, expect, it } from "vitest";
import { signBody, verifySignature } from "./signature";

const bytes = (s: string) => new TextEncoder().encode(s);

describe("webhook signatures", () => {
  it("matches GitHub's documented example", () => {
    // https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries#testing-the-webhook-payload-validation
    const header = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17";
    expect(signBody("It's a Secret to Everybody", "Hello, World!")).toBe(header);
    expect(verifySignature("It's a Secret to Everybody", bytes("Hello, World!"), header)).toEqual({ ok: true });
  });

  it("verifies over the raw bytes, so a body that is not UTF-8 still verifies exactly", () => {
    const raw = new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]);
    expect(verifySignature("s", raw, signBody("s", raw))).toEqual({ ok: true });
  });

  it.each([
    ["missing", null, "missing X-Hub-Signature-256"],
    ["empty", " ", "missing X-Hub-Signature-256"],
    ["sha1", `sha1=${"a".repeat(40)}`, "X-Hub-Signature-256 must be sha256=<hex>"],
    ["not hex", `sha256=${"z".repeat(64)}`, "X-Hub-Signature-256 is not a sha256 hex digest"],
    ["short", "sha256=abcd", "X-Hub-Signature-256 is not a sha256 hex digest"],
    ["another secret", signBody("other", "Hello, World!"), "X-Hub-Signature-256 does not match the body"],
  ])("refuses a %s signature", (_name, header, reason) => {
    expect(verifySignature("It's a Secret to Everybody", bytes("Hello, World!"), header)).toEqual({ ok: false, reason });
  });

  it("accepts upper-case hex (some proxies rewrite it)", () => {
    const header = signBody("k", "body").replace(/[0-9a-f]+$/, (h) => h.toUpperCase());
    expect(verifySignature("k", bytes("body"), header)).toEqual({ ok: true });
  });
});
