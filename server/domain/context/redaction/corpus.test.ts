import { describe, expect, it } from "vitest";
import { redactDeep, redactText, SECRETLINT_PRESET } from "./redact";
import { SECRETLINT_RULES } from "./secretlint";
import { DISGUISES, SECRET_SHAPES, secretPart, showsWhole } from "./testing/corpus";

describe("every token shape, however it is disguised, never shows whole after redaction", () => {
  for (const shape of SECRET_SHAPES) {
    it.each(DISGUISES.map((d) => [d.name, d] as const))(`${shape.name}: %s`, (_n, disguise) => {
      const input = `before ${disguise.apply(shape.value)} after`;
      const { text, report } = redactText(input);
      expect(showsWhole(text, secretPart(shape.value)), text).toBe(false);
      expect(report.status).toBe("redacted");
      expect(text.startsWith("before ")).toBe(true);
      expect(text.endsWith(" after")).toBe(true);
      expect(text.split("\n")).toHaveLength(input.split("\n").length);
      // Idempotent: nothing more to find in what was stored.
      expect(redactText(text).report.status).toBe("clean");
    });
    it(`${shape.name}: as a JSON key`, () => {
      const { value } = redactDeep({ [shape.value]: "v", nested: [{ [`\u001b[32m${shape.value}`]: 1 }] });
      expect(showsWhole(JSON.stringify(value), secretPart(shape.value))).toBe(false);
    });
  }
});

describe("granted values", () => {
  const secret = { name: "DEPLOY_KEY", value: "dk-7Hq2-LmZp-9Rt4-Wx8v" };
  it.each(DISGUISES.map((d) => [d.name, d] as const))("are masked when %s", (_n, disguise) => {
    const { text, report } = redactText(`x ${disguise.apply(secret.value)} y`, { secrets: [secret] });
    expect(showsWhole(text, secret.value)).toBe(false);
    expect(report.entries).toMatchObject([{ kind: "known_secret", name: "DEPLOY_KEY", count: 1 }]);
  });
  it("are masked in JSON keys, and two keys that mask alike stay apart", () => {
    const { value, report } = redactDeep({ [secret.value]: 1, [`${secret.value}`.replace("dk", "dk")]: 2, [`a${secret.value}`]: 3 }, { secrets: [secret] });
    expect(JSON.stringify(value)).not.toContain(secret.value);
    expect(Object.keys(value)).toHaveLength(2);
    expect(report.entries[0]).toMatchObject({ kind: "known_secret", count: 2 });
  });
  it("an entity spelling a character, or a bidi control inside, does not hide it", () => {
    const spelled = `&#x64;${secret.value.slice(1, -1)}&#${secret.value.charCodeAt(secret.value.length - 1)};`;
    const { text } = redactText(`see ${spelled} here`, { secrets: [secret] });
    expect(text).toBe("see [REDACTED:known_secret:DEPLOY_KEY] here");
    const bidi = `${secret.value.slice(0, 4)}\u202e${secret.value.slice(4)}`;
    expect(showsWhole(redactText(bidi, { secrets: [secret] }).text, secret.value)).toBe(false);
  });
  it("a zero-width space or soft hyphen inside does not hide it", () => {
    for (const sep of ["\u200b", "\u00ad", "\ufeff"]) {
      const split = `${secret.value.slice(0, 5)}${sep}${secret.value.slice(5)}`;
      expect(showsWhole(redactText(split, { secrets: [secret] }).text, secret.value)).toBe(false);
    }
  });
});

describe("the maintained rule set", () => {
  it("is secretlint's recommended preset at a pinned version, scanner rules only", () => {
    expect(SECRETLINT_PRESET).toEqual({ id: "@secretlint/secretlint-rule-preset-recommend", version: "12.0.0" });
    expect(SECRETLINT_RULES).toContain("github");
    expect(SECRETLINT_RULES).toContain("anthropic");
    // The filter rule would let "secretlint-disable" in an agent's output switch masking off.
    expect(SECRETLINT_RULES).not.toContain("filter-comments");
    const hidden = `// secretlint-disable\n${SECRET_SHAPES.find((s) => s.name === "github classic")!.value}\n// secretlint-enable`;
    expect(redactText(hidden).report.status).toBe("redacted");
  });
  it("names the rule that found a shape Airlock's own rules do not know", () => {
    // A HashiCorp Vault token: covered by the preset only.
    const vault = ["hv", "s.", "CAESIB", "x9_-".repeat(24)].join("");
    const { text, report } = redactText(`echo ${vault}`);
    expect(text).toBe("echo [REDACTED:token_shape:hashicorp-vault]");
    expect(report.entries).toMatchObject([{ kind: "token_shape", name: "hashicorp-vault", count: 1 }]);
  });
});
