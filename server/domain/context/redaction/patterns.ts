// Token shapes that are secrets wherever they appear. Each pattern is built so it runs in linear
// time on any input:
// - it starts with a lookbehind that rejects a preceding character of the token's own class, so a
//   match can only begin where a run of token characters begins, and each run is scanned once;
// - repetition is either over a class the next element cannot match, or bounded.
// Redaction never changes the number of lines (line numbers in excerpts stay true).

export type SecretKind =
  | "known_secret"
  | "private_key"
  | "github_token"
  | "aws_access_key_id"
  | "aws_secret_access_key"
  | "slack_token"
  | "slack_webhook"
  | "anthropic_key"
  | "openai_key"
  | "gitlab_token"
  | "npm_token"
  | "google_api_key"
  | "stripe_key"
  | "token_shape"
  | "jwt"
  | "bearer_token"
  | "basic_auth"
  | "url_credentials"
  | "secret_assignment";

export const KIND_REASONS: Record<SecretKind, string> = {
  known_secret: "value of a secret granted to this run",
  private_key: "PEM private key block",
  github_token: "GitHub token (ghp_/gho_/ghu_/ghs_/ghr_/github_pat_)",
  aws_access_key_id: "AWS access key id (AKIA/ASIA...)",
  aws_secret_access_key: "AWS secret access key assigned to an aws_secret_access_key name",
  slack_token: "Slack token (xox?-, xapp-)",
  slack_webhook: "Slack incoming webhook URL",
  anthropic_key: "Anthropic API key (sk-ant-)",
  openai_key: "OpenAI API key (sk-proj-/sk-svcacct-/sk-admin-)",
  gitlab_token: "GitLab token (glpat-, gldt-, glrt-...)",
  npm_token: "npm access token (npm_)",
  google_api_key: "Google API key (AIza...)",
  stripe_key: "Stripe secret or restricted key (sk_live_/rk_live_/sk_test_...)",
  token_shape: "token shape found by a rule of secretlint's recommended preset (the rule is named)",
  jwt: "JSON Web Token",
  bearer_token: "Bearer token in an Authorization value",
  basic_auth: "Basic credentials in an Authorization value",
  url_credentials: "password embedded in a URL",
  secret_assignment: "value assigned to a name like password, token, secret or api key",
};

export const marker = (kind: SecretKind, name?: string) => `[REDACTED:${kind}${name ? `:${name}` : ""}]`;

/** A value that is already a marker, a masked value or a reference is not itself a secret. */
export function isPlaceholder(value: string): boolean {
  return (
    value.startsWith("[REDACTED") ||
    value.startsWith("***") ||
    value.startsWith("$") ||
    value.startsWith("<") ||
    value.startsWith("%") ||
    /^(?:null|none|nil|true|false|undefined|redacted|x+|\*+)$/i.test(value)
  );
}

export type TokenPattern = {
  kind: SecretKind;
  /** Global, with indices (`d`): the secret is group `secret` (default: the whole match). */
  pattern: RegExp;
  secret?: number;
  /** Leave the match alone when this says no (a placeholder instead of a value). */
  accept?: (secret: string) => boolean;
};

const notPlaceholder = (secret: string) => !isPlaceholder(secret);

// Airlock's own rules, beside secretlint's preset (secretlint.ts): broader lengths for the shapes
// the preset pins to one exact length, and shapes the preset does not cover (Stripe, Google API
// keys, JWTs, Authorization values, URL credentials, AWS secrets by name).
export const TOKEN_PATTERNS: readonly TokenPattern[] = [
  { kind: "github_token", pattern: /(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})/dg },
  { kind: "aws_access_key_id", pattern: /(?<![A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA)[A-Z0-9]{16}(?![A-Za-z0-9])/dg },
  {
    kind: "aws_secret_access_key",
    // The 40-character key only counts next to its name: a bare 40-character string could be a SHA.
    pattern:
      /(?<![A-Za-z0-9_])((?:aws_?)?secret_?access_?key(?:_?id)?["']?[ \t]{0,5}[:=][ \t]{0,5}["']?)([A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])/dgi,
    secret: 2,
  },
  { kind: "slack_token", pattern: /(?<![A-Za-z0-9_-])(?:xox[a-z]|xapp)-[A-Za-z0-9-]{10,}/dg },
  { kind: "slack_webhook", pattern: /https:\/\/hooks\.slack\.com\/(?:services|workflows)\/[A-Za-z0-9/_-]{8,}/dg },
  { kind: "anthropic_key", pattern: /(?<![A-Za-z0-9_-])sk-ant-[A-Za-z0-9_-]{20,}/dg },
  { kind: "openai_key", pattern: /(?<![A-Za-z0-9_-])sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}/dg },
  { kind: "gitlab_token", pattern: /(?<![A-Za-z0-9_-])gl(?:pat|dt|rt|ptt|ft|imt|soat|oas|cbt|agent)-[A-Za-z0-9_-]{20,}/dg },
  { kind: "npm_token", pattern: /(?<![A-Za-z0-9_])npm_[A-Za-z0-9]{36,}(?![A-Za-z0-9])/dg },
  { kind: "google_api_key", pattern: /(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])/dg },
  { kind: "stripe_key", pattern: /(?<![A-Za-z0-9_])(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}/dg },
  { kind: "jwt", pattern: /(?<![A-Za-z0-9_.-])eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/dg },
  {
    kind: "bearer_token",
    // Capitalised as HTTP sends it: lower-case "bearer" is prose or a token_type value.
    pattern: /(?<![A-Za-z])(Bearer|BEARER)([ \t]{1,10})([A-Za-z0-9._~+/-]{8,}=*)/dg,
    secret: 3,
    accept: notPlaceholder,
  },
  { kind: "basic_auth", pattern: /(?<![A-Za-z])(Basic|basic|BASIC)([ \t]{1,10})([A-Za-z0-9+/]{8,}={0,2})(?![A-Za-z0-9+/=])/dg, secret: 3 },
  {
    kind: "url_credentials",
    pattern: /(?<![A-Za-z0-9+.-])([A-Za-z][A-Za-z0-9+.-]{0,20}:\/\/[^\s:/@]{1,256}:)([^\s/@]{1,256})@/dg,
    secret: 2,
    accept: notPlaceholder,
  },
];

/**
 * `name = value` / `name: value` assignments. Only the name and separator are matched here; the
 * redactor reads the value itself, and only after the name turned out secret-ish, so a long
 * non-secret value is never scanned (or consumed: a secret inside it is still found).
 */
// Leading dashes belong to CLI flags ("--password=x"); the lookbehind covers the dash too, so an
// attempt starts only where a run of name characters starts.
export const ASSIGNMENT_NAME = /(?<![A-Za-z0-9_.-])-{0,2}([A-Za-z][A-Za-z0-9_.-]{0,80})(["']?[ \t]{0,5}[:=][ \t]{0,5}["']?)/g;
/** The value: up to the next space, quote, separator or the end of a query parameter. */
export const ASSIGNMENT_VALUE = /[^\s"'`,;&]{1,4096}/y;

const SECRET_NAME =
  /(?:pass(?:word|wd|phrase)?|pwd|secret|token|api_?key|apikey|access_?key|private_?key|client_?secret|credentials?|auth)$/;
const NOT_SECRET_NAME = /(?:tokens|_?count|_?length|_?len|_?type|_?file|_?path|_?url|_?name|_?id|max_?tokens)$/;

/**
 * A name is secret-ish when it ends in one of the words above (DB_PASSWORD, npmToken,
 * client-secret), and not in a word that describes the secret instead of holding it
 * (token_type, secret_name, password_file, max_tokens).
 */
export function isSecretName(name: string): boolean {
  const n = name.toLowerCase().replace(/[-.]/g, "_");
  if (NOT_SECRET_NAME.test(n)) return false;
  return SECRET_NAME.test(n.replace(/_/g, "")) || SECRET_NAME.test(n);
}

/**
 * Short numbers assigned to token-ish names are settings ("token_ttl: 3600" is caught by the
 * NOT list, "auth: 1" is not): leave them, except for passwords, where a PIN is a secret.
 */
export function isSettingNumber(name: string, value: string): boolean {
  return /^\d{1,6}$/.test(value) && !/pass|pwd/i.test(name);
}
