import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ASSIGNMENT_NAME, TOKEN_PATTERNS, isSecretName } from "./patterns";
import { mayHaveSecretAssignment, mayHaveUrlCredentials, mergeReports, redactDeep, redactText, reportFromMarkers, type RedactionReport } from "./redact";

// Fake credentials with the real shapes. They are assembled at runtime so secret scanners do not
// flag this file.
const GH_PAT = ["ghp", "_", "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"].join("");
const GH_FINE = ["github", "_pat_", "11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVW"].join("");
const GH_INSTALL = ["ghs", "_", "16C7e42F292c6912E7710c838347Ae178B4a"].join("");
const GH_OAUTH = ["gho", "_", "16C7e42F292c6912E7710c838347Ae178B4a"].join("");
const AWS_ID = ["AKIA", "IOSFODNN7EXAMPLE"].join("");
const AWS_SECRET = ["wJalrXUtnFEMI", "/K7MDENG/bPxRfiCYEXAMPLEKEY"].join("");
const SLACK = ["xoxb", "-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"].join("");
const SLACK_HOOK = ["https://hooks.slack.com/services/", "T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX"].join("");
const JWT = [
  "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9",
  "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ",
  "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
].join(".");
const PEM = [
  "-----BEGIN RSA PRIVATE KEY-----",
  "MIIEpAIBAAKCAQEA1c7+9z5Pad7OejecsQ0bu3aozN3tihPmljnnudb9G3HECdnH",
  "lWu2/a1gB9JW5TBQ+AVpum9Okx7KfqkfBKL9mcHgSL0yWMdjMfNOqNtrQqKlN4kE",
  "p6RtmNJmDPw3nQBUA==",
  "-----END RSA PRIVATE KEY-----",
].join("\n");

const kinds = (r: RedactionReport) => Object.fromEntries(r.entries.map((e) => [e.name ? `${e.kind}:${e.name}` : e.kind, e.count]));

describe("redactText finds common token shapes", () => {
  it.each([
    ["github classic token", `git clone https://x-access-token:${GH_INSTALL}@github.com/acme/web.git`, "github_token", GH_INSTALL],
    ["github PAT in an env dump", `GH_TOKEN=${GH_PAT}`, "github_token", GH_PAT],
    ["github fine-grained PAT", `token ${GH_FINE} used`, "github_token", GH_FINE],
    ["github oauth token", `"access_token":"${GH_OAUTH}"`, "github_token", GH_OAUTH],
    ["aws access key id", `aws_access_key_id = ${AWS_ID}`, "aws_access_key_id", AWS_ID],
    ["aws secret access key", `AWS_SECRET_ACCESS_KEY=${AWS_SECRET}`, "aws_secret_access_key", AWS_SECRET],
    ["aws secret in yaml", `  aws_secret_access_key: "${AWS_SECRET}"`, "aws_secret_access_key", AWS_SECRET],
    ["slack bot token", `SLACK_TOKEN: ${SLACK}`, "slack_token", SLACK],
    ["slack webhook", `curl -X POST ${SLACK_HOOK} -d @msg.json`, "slack_webhook", SLACK_HOOK],
    ["jwt", `id_token=${JWT}`, "jwt", JWT],
    ["bearer header", "Authorization: Bearer abc.DEF-ghi_123~456+789/0==", "bearer_token", "abc.DEF-ghi_123~456+789/0=="],
    ["basic header", "authorization: Basic dXNlcjpodW50ZXIyMjI=", "basic_auth", "dXNlcjpodW50ZXIyMjI="],
    ["url credentials", "DATABASE_URL=postgres://app:s3cr3t-P4ss@db.internal:5432/app", "url_credentials", "s3cr3t-P4ss"],
    ["password assignment", "mysql -u root --password=hunter2hunter2 -h db", "secret_assignment", "hunter2hunter2"],
    ["json password", '{"user":"ci","password":"correct horse"}', "secret_assignment", "correct"],
    ["yaml api key", "  api_key: 8f14e45fceea167a5a36dedd4bea2543", "secret_assignment", "8f14e45fceea167a5a36dedd4bea2543"],
    ["token in a query string", "GET /v1/items?page=2&access_token=abcDEF123456 200", "secret_assignment", "abcDEF123456"],
    ["camelCase secret", "clientSecret=Zk9vQmFyQmF6", "secret_assignment", "Zk9vQmFyQmF6"],
    ["private key block", `key:\n${PEM}\ndone`, "private_key", "MIIEpAIBAAKCAQEA1c7"],
  ])("%s", (_name, input, kind, secret) => {
    const { text, report } = redactText(input);
    expect(text).not.toContain(secret);
    expect(text).toContain(`[REDACTED:${kind}`);
    expect(report.status).toBe("redacted");
    expect(report.entries.map((e) => e.kind)).toContain(kind);
    expect(JSON.stringify(report)).not.toContain(secret);
  });

  it("keeps the surrounding text readable", () => {
    expect(redactText("Authorization: Bearer abcdefgh12345678").text).toBe("Authorization: Bearer [REDACTED:bearer_token]");
    expect(redactText("postgres://app:pw123456@db:5432/app").text).toBe("postgres://app:[REDACTED:url_credentials]@db:5432/app");
    expect(redactText("DB_PASSWORD=hunter2 npm start").text).toBe("DB_PASSWORD=[REDACTED:secret_assignment] npm start");
    expect(redactText(`export GITHUB_TOKEN=${GH_PAT}`).text).toBe("export GITHUB_TOKEN=[REDACTED:github_token]");
  });

  it.each([
    ["a commit SHA", "HEAD is now at 3f9a1c2b7d4e5f60718293a4b5c6d7e8f9012345 Merge"],
    ["a 40-char SHA after a non-secret name", "sha=3f9a1c2b7d4e5f60718293a4b5c6d7e8f9012345"],
    ["an image digest", "node@sha256:6e80b7dffed3e1b0d4aa3d8f2b9fa2a1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5"],
    ["a uuid", "request 4f1c2a9e-8b3d-4e5f-9a7b-1c2d3e4f5a6b"],
    ["a token type", "token_type=bearer expires_in=3600"],
    ["token counts", "max_tokens=4096 input_tokens: 1200"],
    ["a masked value", "password=*** token: ***"],
    ["an expression", "password: ${{ secrets.DB_PASSWORD }}"],
    ["an env reference", "TOKEN=$GITHUB_TOKEN"],
    ["the secret's name", "secret_name=NPM_TOKEN password_file=/run/secrets/db"],
    ["plain prose", "The password field must not be empty; see the token docs."],
    ["a URL without credentials", "https://github.com/acme/web/actions/runs/1"],
    ["the word bearer in prose", "the bearer of bad news"],
  ])("leaves %s alone", (_name, input) => {
    expect(redactText(input)).toEqual({ text: input, report: { status: "clean", entries: [], warnings: [] } });
  });
});

describe("redactText with granted secrets", () => {
  const secrets = [
    { name: "NPM_TOKEN", value: "npm_Zq8Lr2Vx9Tk4Wm7Pn3Hs6Jd1Fb5Gc0Ya2Eu" },
    { name: "DEPLOY_PASS", value: "p@ss word/with?chars" },
  ];

  it("replaces every occurrence and counts them by name", () => {
    const input = `//registry.npmjs.org/:_authToken=${secrets[0]!.value}\necho ${secrets[0]!.value} | base64\nlogin ${secrets[1]!.value}`;
    const { text, report } = redactText(input, { secrets });
    expect(text).toBe(
      "//registry.npmjs.org/:_authToken=[REDACTED:known_secret:NPM_TOKEN]\necho [REDACTED:known_secret:NPM_TOKEN] | base64\nlogin [REDACTED:known_secret:DEPLOY_PASS]",
    );
    expect(kinds(report)).toEqual({ "known_secret:NPM_TOKEN": 2, "known_secret:DEPLOY_PASS": 1 });
    expect(report.entries[0]).toMatchObject({ reason: "value of a secret granted to this run" });
  });

  it("also replaces the URL- and JSON-encoded forms", () => {
    const encoded = encodeURIComponent(secrets[1]!.value);
    const { text } = redactText(`curl "https://x/login?p=${encoded}"`, { secrets });
    expect(text).not.toContain(encoded);
    const json = redactText(JSON.stringify({ v: 'a"quoted\\secret' }), { secrets: [{ name: "Q", value: 'a"quoted\\secret' }] });
    expect(json.text).toBe('{"v":"[REDACTED:known_secret:Q]"}');
  });

  it("keeps line numbers when a secret spans lines", () => {
    const value = "line-one-secret\nline-two-secret";
    const input = `before\n${value}\nafter`;
    const { text } = redactText(input, { secrets: [{ name: "MULTI", value }] });
    expect(text.split("\n")).toHaveLength(input.split("\n").length);
    expect(text).toBe("before\n[REDACTED:known_secret:MULTI]\n\nafter");
  });

  it("warns instead of shredding text with a too-short value", () => {
    const { text, report } = redactText("abc and abc", { secrets: [{ name: "TINY", value: "abc" }] });
    expect(text).toBe("abc and abc");
    expect(report.warnings).toEqual(["secret TINY is shorter than 4 characters and was not redacted"]);
  });

  it("prefers the longer of two overlapping secrets", () => {
    const { text, report } = redactText("key=abcdefgh-123", {
      secrets: [
        { name: "SHORT", value: "abcdefgh" },
        { name: "LONG", value: "abcdefgh-123" },
      ],
    });
    expect(text).toBe("key=[REDACTED:known_secret:LONG]");
    expect(kinds(report)).toEqual({ "known_secret:LONG": 1 });
  });
});

describe("private keys", () => {
  it("keeps the line count and redacts the body", () => {
    const input = `a\n${PEM}\nb`;
    const { text, report } = redactText(input);
    expect(text.split("\n")).toHaveLength(input.split("\n").length);
    expect(text.startsWith("a\n[REDACTED:private_key]\n")).toBe(true);
    expect(text.endsWith("\nb")).toBe(true);
    expect(kinds(report)).toEqual({ private_key: 1 });
  });

  it("redacts a truncated key without END up to the end of its body", () => {
    const cut = PEM.split("\n").slice(0, 3).join("\n");
    const { text } = redactText(`${cut}\nnext step output`);
    expect(text).toBe("[REDACTED:private_key]\n\n\nnext step output");
  });

  it("redacts keys escaped inside JSON strings", () => {
    const { text } = redactText(JSON.stringify({ key: PEM }));
    expect(text).toBe('{"key":"[REDACTED:private_key]"}');
  });
});

describe("redaction invariants", () => {
  const secretish = fc.constantFrom(GH_PAT, AWS_ID, `password=${"x1".repeat(6)}`, JWT, SLACK, `Bearer ${"t".repeat(20)}`, PEM, "postgres://u:pw12345678@h/db");
  const noise = fc.string({ unit: fc.constantFrom(..."ab01 =:\n/-_.\"'"), maxLength: 40 });
  const document = fc.array(fc.oneof(noise, secretish), { maxLength: 12 }).map((parts) => parts.join(" "));

  it("never changes the number of lines", () => {
    fc.assert(
      fc.property(document, (doc) => redactText(doc).text.split("\n").length === doc.split("\n").length),
      { numRuns: 300 },
    );
  });

  it("is idempotent", () => {
    fc.assert(
      fc.property(document, (doc) => {
        const once = redactText(doc).text;
        const twice = redactText(once);
        return twice.text === once && twice.report.status === "clean";
      }),
      { numRuns: 300 },
    );
  });

  it("never leaves a granted secret in the output", () => {
    const value = fc.string({ unit: fc.constantFrom(..."abcXYZ0123456789-_/+=:@?& "), minLength: 4, maxLength: 30 });
    fc.assert(
      fc.property(value, noise, noise, (secret, a, b) => {
        fc.pre(secret.trim().length >= 4);
        const { text } = redactText(`${a}${secret}${b}${secret}`, { secrets: [{ name: "S", value: secret }] });
        return !text.includes(secret);
      }),
      { numRuns: 300 },
    );
  });
});

describe("redaction on huge and hostile inputs", () => {
  const timed = (input: string) => {
    const started = performance.now();
    redactText(input, { secrets: [{ name: "K", value: "not-in-the-text-1234" }] });
    return performance.now() - started;
  };

  it("handles a 20 MB log in linear time", () => {
    const line = `2025-03-04T09:12:03.4471234Z test ok sha=3f9a1c2b7d4e5f60718293a4b5c6d7e8f9012345 url=https://github.com/acme/web token_type=bearer GH_TOKEN=${GH_PAT}\n`;
    const big = line.repeat(Math.ceil(20_000_000 / line.length));
    expect(timed(big)).toBeLessThan(15_000);
  });

  it.each([
    ["repeated github prefixes", "ghp_".repeat(500_000)],
    ["a run of token characters", "A".repeat(2_000_000)],
    ["dash-separated jwt starts", "eyJ-".repeat(500_000)],
    ["dotted jwt starts", "eyJabcdef.".repeat(200_000)],
    ["BEGIN without END", "-----BEGIN PRIVATE KEY-----\n".repeat(100_000)],
    ["BEGIN lookalikes", "-----BEGIN ".repeat(200_000)],
    ["END lookalikes", `-----BEGIN PRIVATE KEY-----${"-----END ".repeat(200_000)}`],
    ["chained assignments", "a=".repeat(1_000_000)],
    ["chained secret names", "password=".repeat(200_000)],
    ["dash-separated names", "a-".repeat(1_000_000)],
    ["bearer repeated", "Bearer ".repeat(300_000)],
    ["scheme lookalikes", "x://".repeat(500_000)],
    ["at signs and colons", "a:b@".repeat(500_000)],
    ["basic repeated", "Basic ".repeat(300_000)],
  ])("%s", (_name, input) => {
    expect(timed(input)).toBeLessThan(3_000);
  });
});

describe("redactDeep", () => {
  it("redacts every string in a nested value and merges the reports", () => {
    const input = {
      logs: [{ excerpt: `GH_TOKEN=${GH_PAT}`, lines: 3 }],
      pullRequest: { body: `see ${AWS_ID} and ${GH_OAUTH}`, labels: ["a", "b"] },
      [`password`]: "field names stay",
      nested: [[`Bearer ${"z".repeat(16)}`]],
      n: 1,
      flag: null,
    };
    const { value, report } = redactDeep(input);
    expect(value).toEqual({
      logs: [{ excerpt: "GH_TOKEN=[REDACTED:github_token]", lines: 3 }],
      pullRequest: { body: "see [REDACTED:aws_access_key_id] and [REDACTED:github_token]", labels: ["a", "b"] },
      password: "field names stay",
      nested: [["Bearer [REDACTED:bearer_token]"]],
      n: 1,
      flag: null,
    });
    expect(kinds(report)).toEqual({ github_token: 2, aws_access_key_id: 1, bearer_token: 1 });
  });

  it("merges reports by kind and name", () => {
    const merged = mergeReports([
      { status: "redacted", entries: [{ kind: "jwt", name: null, count: 1, reason: "x" }], warnings: ["w"] },
      { status: "redacted", entries: [{ kind: "jwt", name: null, count: 2, reason: "x" }], warnings: ["w"] },
    ]);
    expect(merged).toEqual({
      status: "redacted",
      entries: [{ kind: "jwt", name: null, count: 3, reason: "JSON Web Token" }],
      warnings: ["w"],
    });
  });
});

describe("isSecretName", () => {
  it.each([
    ["DB_PASSWORD", true],
    ["password", true],
    ["npmToken", true],
    ["client-secret", true],
    ["x_api_key", true],
    ["AWS_SECRET_ACCESS_KEY", true],
    ["token_type", false],
    ["secret_name", false],
    ["max_tokens", false],
    ["password_file", false],
    ["sha", false],
    ["author", false],
  ])("%s -> %s", (name, expected) => {
    expect(isSecretName(name)).toBe(expected);
  });
});

describe("granted secrets in encoded forms and markers from an earlier pass", () => {
  const secret = { name: "NPM_TOKEN", value: "npm-live-7f3c9a1e5b2d" };

  it("redacts the Base64 form of a granted value, padded or not", () => {
    const b64 = Buffer.from(secret.value).toString("base64");
    const out = redactText(`a ${b64} b ${b64.replace(/=+$/, "")}`, { secrets: [secret] });
    expect(out.text).toBe("a [REDACTED:known_secret:NPM_TOKEN] b [REDACTED:known_secret:NPM_TOKEN]");
  });

  it("reports the markers already in a text as what was redacted", () => {
    const first = redactText(`token ${"ghp_" + "a1".repeat(18)} and ${secret.value}`, { secrets: [secret] });
    expect(redactText(first.text, { secrets: [secret] }).report.status).toBe("clean");
    expect(reportFromMarkers(first.text)).toEqual(first.report);
    expect(reportFromMarkers("nothing here")).toEqual({ status: "clean", entries: [], warnings: [] });
    expect(reportFromMarkers("[REDACTED:not_a_kind] [REDACTED:jwt]").entries.map((e) => e.kind)).toEqual(["jwt"]);
  });
});

describe("quick checks never skip a pass that would redact", () => {
  // Text built from the characters the patterns care about, so matches are frequent.
  const pieces = ["pass", "word", "pwd", "to", "ken", "key", "api", "secret", "auth", "credential", "s", "-", "_", ".", ":", "=", '"', "'", " ", "\t", "\n", "@", "/", "://", "https", "u", "p", "1", "\u00a0", "é"];
  const text = fc.array(fc.constantFrom(...pieces), { maxLength: 40 }).map((parts) => parts.join(""));
  const url = TOKEN_PATTERNS.find((p) => p.kind === "url_credentials")!.pattern;

  const chars = fc.string({ unit: fc.constantFrom("u", "s", ":", "/", "@", " ", "\t", "é", "\u00a0", "\u2028", "x"), maxLength: 6 });
  const urlish = fc
    .tuple(fc.constantFrom("", "x", " ", "é"), fc.constantFrom("https://", "git+ssh://", "h://", "://"), chars, fc.constantFrom(":", "", "::"), chars, fc.constantFrom("@", "", "/@"), chars)
    .map((parts) => parts.join(""));

  // A fixed seed: these tests also assert how often the generator hits a pattern,
  // which must not depend on the luck of a run.
  it("url credentials", () => {
    let matched = 0;
    fc.assert(
      fc.property(urlish, (t) => {
        if (!new RegExp(url.source, "g").test(t)) return;
        matched++;
        expect(mayHaveUrlCredentials(t)).toBe(true);
      }),
      { numRuns: 5_000, seed: 20261129 },
    );
    expect(matched).toBeGreaterThan(50);
    expect(mayHaveUrlCredentials("https://api.github.com/repos/a/b git@github.com:a/b.git")).toBe(false);
    expect(mayHaveUrlCredentials("https://deploy:s3cret@host/x")).toBe(true);
  });

  it("secret assignments", () => {
    let matched = 0;
    fc.assert(
      fc.property(text, (t) => {
        const names = [...t.matchAll(new RegExp(ASSIGNMENT_NAME.source, "g"))].map((m) => m[1] ?? "");
        if (!names.some(isSecretName)) return;
        matched++;
        expect(mayHaveSecretAssignment(t)).toBe(true);
      }),
      { numRuns: 5_000, seed: 20261129 },
    );
    expect(matched).toBeGreaterThan(50);
    expect(mayHaveSecretAssignment("https://api.github.com/users/octocat/keys{/key_id} author: me")).toBe(false);
    expect(mayHaveSecretAssignment("DB_PASS_WORD = x")).toBe(true);
    expect(mayHaveSecretAssignment("to-ken: x")).toBe(true);
  });
});
