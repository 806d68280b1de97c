import { describe, expect, it } from "vitest";
import { isAppError } from "@/server/errors";
import { buildContextBundle } from "./build-context-bundle";
import { contentDigest } from "@/server/lib/digest";
import { sampleInput } from "./fixtures/sample-input";
import { PROMPT_VARIABLE_NAMES, checkPromptTemplate, renderPrompt } from "./prompt";

const built = buildContextBundle(sampleInput());

function errorOf(fn: () => unknown) {
  try {
    fn();
  } catch (err) {
    if (isAppError(err)) return err;
    throw err;
  }
  throw new Error("expected an error");
}

describe("renderPrompt", () => {
  it("fills scalars, lists and absent values", () => {
    const template = [
      "Diagnose {{ job.name }} in {{repository.fullName}} at {{ref.commitSha}} (fork: {{ref.isFork}}).",
      "PR #{{pullRequest.number}}: {{pullRequest.title}}",
      "Changed:\n{{pullRequest.changedFiles}}",
      "Label: {{source.label}}",
    ].join("\n");
    const { prompt, variables } = renderPrompt(template, built.bundle, built.digest);
    expect(prompt).toBe(
      [
        "Diagnose test in acme/web at aa00bb11cc22dd33ee44ff5566778899aabbccdd (fork: no).",
        "PR #12: Relative dates",
        "Changed:\n- src/lib/date.test.ts\n- src/lib/date.ts",
        "Label: (none)",
      ].join("\n"),
    );
    expect(variables).toEqual([
      "job.name",
      "pullRequest.changedFiles",
      "pullRequest.number",
      "pullRequest.title",
      "ref.commitSha",
      "ref.isFork",
      "repository.fullName",
      "source.label",
    ]);
  });

  it("renders the logs fenced with their line range, and the bundle digest", () => {
    const { prompt } = renderPrompt("{{logs.excerpt}}\n{{bundle.digest}}", built.bundle, built.digest);
    const log = built.bundle.logs[0]!;
    expect(prompt.startsWith(`test / Run npx vitest run (lines ${log.startLine}-${log.endLine} of ${log.totalLines}):\n\`\`\`text\n`)).toBe(true);
    expect(prompt.endsWith(`\`\`\`\n${built.digest}`)).toBe(true);
  });

  it("renders every documented variable for a full bundle", () => {
    for (const name of PROMPT_VARIABLE_NAMES) {
      const { prompt } = renderPrompt(`{{${name}}}`, built.bundle, built.digest);
      expect(prompt, name).not.toBe("");
    }
  });

  it("leaves GitHub Actions expressions alone", () => {
    const { prompt } = renderPrompt("Uses ${{ secrets.NPM_TOKEN }} in {{job.step}}", built.bundle, built.digest);
    expect(prompt).toBe("Uses ${{ secrets.NPM_TOKEN }} in Run npx vitest run");
  });

  it("does not expand placeholders that arrive inside values", () => {
    const input = sampleInput();
    input.pullRequest = { ...input.pullRequest!, title: "{{bundle.json}} please" };
    const b = buildContextBundle(input);
    expect(renderPrompt("{{pullRequest.title}}", b.bundle, b.digest).prompt).toBe("{{bundle.json}} please");
  });

  it("does not mistake object built-ins for variables", () => {
    const err = errorOf(() => renderPrompt("{{constructor}} {{toString}}", built.bundle, built.digest));
    expect(err.details).toEqual({ unknown: ["constructor", "toString"], malformed: [] });
  });

  it("lists every unknown variable in one error", () => {
    const err = errorOf(() => renderPrompt("{{repo.name}} {{ job.name }} {{pr.title}} {{repo.name}}", built.bundle, built.digest));
    expect(err.code).toBe("UNPROCESSABLE");
    expect(err.message).toMatch(/^unknown prompt variables: \{\{pr\.title\}\}, \{\{repo\.name\}\} \(known: actor\.login, actor\.permission, artifacts, /);
    expect(err.details).toEqual({ unknown: ["pr.title", "repo.name"], malformed: [] });
  });

  it("refuses malformed and unclosed placeholders", () => {
    const err = errorOf(() => renderPrompt("{{ job name }} and {{job.step", built.bundle, built.digest));
    expect(err.details).toEqual({ unknown: [], malformed: ["{{ job name }}", "{{job.step"] });
  });

  it("hashes the prompt text", () => {
    const a = renderPrompt("Fix {{job.name}}", built.bundle, built.digest);
    expect(a.promptHash).toBe(contentDigest("Fix test"));
    const other = buildContextBundle(sampleInput({ job: { ...sampleInput().job!, name: "lint" } }));
    expect(renderPrompt("Fix {{job.name}}", other.bundle, other.digest).promptHash).not.toBe(a.promptHash);
  });
});

describe("checkPromptTemplate", () => {
  it("reports variables, unknown names and malformed placeholders for stack validation", () => {
    expect(checkPromptTemplate("{{task.kind}} {{nope}} {{ }} ${{ github.sha }}")).toEqual({
      variables: ["task.kind"],
      unknown: ["nope"],
      malformed: ["{{ }}"],
    });
  });

  describe("red-check attribution", () => {
    const ours = { check: "ci / test", attribution: "ours" as const, rule: "our_edits_after_green", guidance: "Fix it first.", history: "abc1234 ci / test=success +edits -> ci / test red at def5678" };
    const lint = { check: "lint", attribution: "pre_existing" as const, rule: "already_red_before_us", guidance: "Report it.", history: "h" };

    it("is appended when the template does not ask for it, and rendered in place when it does", () => {
      const b = buildContextBundle({ ...sampleInput(), attribution: [ours, lint] });
      expect(renderPrompt("Fix {{job.step}}.", b.bundle, b.digest).prompt).toBe(
        "Fix Run npx vitest run.\n\n## Red checks on this branch (attribution)\n- ci / test: ours. Fix it first.\n- lint: pre-existing. Report it.\n",
      );
      expect(renderPrompt("Red: {{attribution}}", b.bundle, b.digest).prompt).toBe("Red: - ci / test: ours. Fix it first.\n- lint: pre-existing. Report it.");
      // Without attribution the prompt is exactly the template's.
      expect(renderPrompt("Fix {{job.step}}.", built.bundle, built.digest).prompt).toBe("Fix Run npx vitest run.");
    });

    it("keeps the bundle digest a function of its inputs", () => {
      const a = buildContextBundle({ ...sampleInput(), attribution: [ours, lint] });
      const same = buildContextBundle({ ...sampleInput(), attribution: [lint, ours] });
      expect(same.digest).toBe(a.digest);
      expect(a.bundle.attribution?.map((x) => x.check)).toEqual(["ci / test", "lint"]);
      const other = buildContextBundle({ ...sampleInput(), attribution: [{ ...ours, attribution: "unknown" }, lint] });
      expect(other.digest).not.toBe(a.digest);
      // No attribution: the field is absent, so bundles made before it existed keep their digests.
      expect(buildContextBundle({ ...sampleInput(), attribution: [] }).digest).toBe(built.digest);
      expect("attribution" in built.bundle).toBe(false);
    });
  });
});
