// Tool-specific readers that find failing tests and error lines in a cleaned CI log. Each one
// knows one tool's output format; they all run, and what they find is merged in log order.
import type { CleanLine } from "./normalise";

export type Finding = {
  kind: "test" | "error";
  text: string;
  /** 0-based index into the log's lines. */
  index: number;
  tool: string;
};

type Extractor = (lines: readonly CleanLine[]) => Finding[];

const at = (tool: string, kind: Finding["kind"], text: string, index: number): Finding => ({
  tool,
  kind,
  text: text.trim(),
  index,
});

/** pytest: the short test summary, `E   ` assertion lines and collection errors. */
const pytest: Extractor = (lines) => {
  const out: Finding[] = [];
  lines.forEach(({ text }, i) => {
    const summary = /^(FAILED|ERROR) (\S+?\.py(?:::\S+)?)(?: - (.+))?$/.exec(text);
    if (summary) {
      out.push(at("pytest", "test", summary[2] ?? "", i));
      if (summary[3]) out.push(at("pytest", "error", summary[3], i));
      return;
    }
    const assertion = /^E {1,8}(\S.*)$/.exec(text);
    if (assertion) out.push(at("pytest", "error", assertion[1] ?? "", i));
  });
  return out;
};

/** jest: "● Suite › test" headers and the first lines of each failure's message. */
const jest: Extractor = (lines) => {
  const out: Finding[] = [];
  for (let i = 0; i < lines.length; i++) {
    const text = lines[i]?.text ?? "";
    const header = /^\s*● (.+)$/.exec(text);
    if (!header) continue;
    const name = header[1] ?? "";
    if (name.includes(" › ")) out.push(at("jest", "test", name, i));
    // The message: the next non-blank lines that are not code frames or stack frames.
    let taken = 0;
    for (let j = i + 1; j < lines.length && j <= i + 12 && taken < 3; j++) {
      const next = (lines[j]?.text ?? "").trim();
      if (next === "" || /^\d+ \||^>|^\||^at /.test(next)) continue;
      if (next.startsWith("●")) break;
      out.push(at("jest", "error", next, j));
      taken++;
    }
  }
  return out;
};

/** vitest: " FAIL  file > suite > test" and the error that follows it. */
const vitest: Extractor = (lines) => {
  const out: Finding[] = [];
  lines.forEach(({ text }, i) => {
    // An optional project name may sit between FAIL and the file (" FAIL  unit  src/a.test.ts > x").
    const fail = /^\s*FAIL\s+(?:\S+\s+)?(\S+\.[cm]?[jt]sx? > .+)$/.exec(text);
    if (fail) out.push(at("vitest", "test", (fail[1] ?? "").replace(/\s+\[[^\]]*\]$/, ""), i));
  });
  return out;
};

/** JavaScript and Python exceptions at the start of a line ("TypeError: x is undefined"). */
const exceptions: Extractor = (lines) => {
  const out: Finding[] = [];
  lines.forEach(({ text }, i) => {
    const m = /^\s*((?:[A-Z][A-Za-z0-9]*\.)*[A-Z][A-Za-z0-9]*(?:Error|Exception)|Error|panic): (.+)$/.exec(text);
    if (m) out.push(at("exception", "error", `${m[1]}: ${m[2]}`, i));
  });
  return out;
};

/** go test: "--- FAIL: TestX", "file_test.go:12: message", panics and failed packages. */
const goTest: Extractor = (lines) => {
  const out: Finding[] = [];
  lines.forEach(({ text }, i) => {
    const fail = /^\s*--- FAIL: (\S+)/.exec(text);
    if (fail) return void out.push(at("go", "test", fail[1] ?? "", i));
    const log = /^\s+(\S+_test\.go:\d+): (.+)$/.exec(text);
    if (log) return void out.push(at("go", "error", `${log[1]}: ${log[2]}`, i));
    const pkg = /^FAIL\s+(\S+)\s+\S+$/.exec(text);
    if (pkg && pkg[1] !== "FAIL") out.push(at("go", "error", `FAIL ${pkg[1]}`, i));
  });
  return out;
};

/** cargo test: "test x ... FAILED", panics with their message, rustc errors. */
const cargo: Extractor = (lines) => {
  const out: Finding[] = [];
  lines.forEach(({ text }, i) => {
    const fail = /^test (\S+) \.\.\. FAILED$/.exec(text);
    if (fail) return void out.push(at("cargo", "test", fail[1] ?? "", i));
    const panic = /^thread '([^']+)' panicked at (.+?):?$/.exec(text);
    if (panic) {
      out.push(at("cargo", "error", `panicked at ${panic[2]}`, i));
      // Rust >= 1.73 prints the message on the following lines.
      for (let j = i + 1; j < lines.length && j <= i + 3; j++) {
        const next = (lines[j]?.text ?? "").trim();
        if (next === "" || next.startsWith("note:") || next.startsWith("stack backtrace")) break;
        out.push(at("cargo", "error", next, j));
      }
      return;
    }
    const rustc = /^error\[(E\d{4})\]: (.+)$/.exec(text);
    if (rustc) {
      // "mismatched types" alone says little: the file it points at ("--> src/a.rs:14:5") tells
      // two of them apart.
      const where = /^\s*--> (\S+?):\d+/.exec(lines[i + 1]?.text ?? "");
      out.push(at("cargo", "error", `error[${rustc[1]}]: ${rustc[2]}${where ? ` at ${where[1]}` : ""}`, i));
    }
  });
  return out;
};

/** tsc: "file.ts(12,5): error TS2322: ..." and the pretty "file.ts:12:5 - error TS2322: ...". */
const tsc: Extractor = (lines) => {
  const out: Finding[] = [];
  lines.forEach(({ text }, i) => {
    const m = /^(?:Error: )?(\S+?\.[cm]?[jt]sx?)(\(\d+,\d+\)|:\d+:\d+) ?[:-] error (TS\d+): (.+)$/.exec(text);
    if (m) out.push(at("tsc", "error", `${m[1]}${m[2]}: ${m[3]}: ${m[4]}`, i));
  });
  return out;
};

/** eslint (stylish): a file path line, then "  12:5  error  message  rule" lines. */
const eslint: Extractor = (lines) => {
  const out: Finding[] = [];
  let file: string | null = null;
  lines.forEach(({ text }, i) => {
    if (/^\S+\.(?:[cm]?[jt]sx?|vue|svelte|astro)$/.test(text)) {
      file = text;
      return;
    }
    const m = /^\s+(\d+:\d+)\s+error\s+(.+?)\s{2,}(\S+)$/.exec(text);
    if (m && file !== null) out.push(at("eslint", "error", `${file}:${m[1]}: ${m[3]}: ${m[2]}`, i));
    else if (text.trim() === "") file = null;
  });
  return out;
};

/** npm: the error code and the first explanation lines of an npm failure. */
const npm: Extractor = (lines) => {
  const out: Finding[] = [];
  let taken = 0;
  lines.forEach(({ text }, i) => {
    const m = /^npm (?:ERR!|error) (.+)$/.exec(text);
    if (!m || taken >= 4) return;
    const body = (m[1] ?? "").trim();
    if (body === "" || /^(A complete log|Log files were not written|\s*$)/.test(body)) return;
    out.push(at("npm", "error", `npm ERR! ${body}`, i));
    taken++;
  });
  return out;
};

/** docker build (BuildKit and the classic builder). */
const docker: Extractor = (lines) => {
  const out: Finding[] = [];
  lines.forEach(({ text }, i) => {
    const m =
      /^ERROR: failed to (?:solve|build): (.+)$/.exec(text) ??
      /^#\d+ ERROR: (.+)$/.exec(text) ??
      /^ERROR \[[^\]]+\] (.+)$/.exec(text) ??
      /^The command '(.+)' returned a non-zero code: \d+$/.exec(text);
    if (m) out.push(at("docker", "error", m[0].startsWith("The command") ? m[0] : `docker: ${m[1]}`, i));
  });
  return out;
};

/** Deploys: helm, kubectl rollouts and pod states, terraform. */
const deploy: Extractor = (lines) => {
  const out: Finding[] = [];
  lines.forEach(({ text }, i) => {
    const m =
      /^Error: ((?:UPGRADE|INSTALLATION|ROLLBACK) FAILED: .+)$/.exec(text) ??
      /^error: (deployment "[^"]+" exceeded its progress deadline)$/.exec(text) ??
      /^error: (timed out waiting for the condition.*)$/.exec(text) ??
      /^\s*(\S+\s+\d+\/\d+\s+(?:CrashLoopBackOff|ImagePullBackOff|ErrImagePull|OOMKilled|Error|CreateContainerConfigError))\b/.exec(
        text,
      ) ??
      // terraform draws its errors in a box: "│ Error: ...".
      /^│ Error: (.+)$/.exec(text);
    if (m) out.push(at("deploy", "error", m[1] ?? "", i));
  });
  return out;
};

/** C-family compilers and other "path:line:col: error: message" tools, and make. */
const compiler: Extractor = (lines) => {
  const out: Finding[] = [];
  lines.forEach(({ text }, i) => {
    const m = /^(\S+?):(\d+)(?::\d+)?: (?:fatal )?error: (.+)$/.exec(text);
    if (m) return void out.push(at("compiler", "error", `${m[1]}:${m[2]}: error: ${m[3]}`, i));
    const make = /^make(?:\[\d+\])?: \*\*\* (.+)$/.exec(text);
    if (make && !(make[1] ?? "").startsWith("Waiting for unfinished jobs")) out.push(at("make", "error", `make: ${make[1]}`, i));
  });
  return out;
};

/** Most specific first: when two read the same line, the first one's reading is kept. */
export const EXTRACTORS: readonly Extractor[] = [
  pytest,
  jest,
  vitest,
  goTest,
  tsc,
  eslint,
  npm,
  docker,
  deploy,
  cargo,
  compiler,
  exceptions,
];

// Lines every failed GitHub Actions job ends with: they say nothing about which failure it was.
const BOILERPLATE =
  /^(?:Process completed with exit code \d+\.?|Error: Process completed with exit code \d+\.?|The operation was canceled\.|Error: The process '.+' failed with exit code \d+|npm ERR! (?:A complete log|Log files)|error Command failed with exit code \d+\.|ELIFECYCLE.*|Error: Command failed: .*)$/;

/**
 * Fallback when no tool is recognised: error-looking lines (including the runner's own
 * `##[error]` annotations), minus the boilerplate every failed job prints.
 */
export function genericFindings(lines: readonly CleanLine[]): Finding[] {
  const out: Finding[] = [];
  lines.forEach(({ text, annotation }, i) => {
    const t = text.trim();
    if (t === "" || BOILERPLATE.test(t)) return;
    if (annotation === "error" || /\b(?:error|fatal|failed|failure|exception)\b/i.test(t)) {
      if (/\b0 (?:errors?|failures?|failed)\b/i.test(t)) return;
      out.push(at("generic", "error", t, i));
    }
  });
  return out;
}

export function isBoilerplate(text: string): boolean {
  return BOILERPLATE.test(text.trim());
}
