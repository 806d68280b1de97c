// Prompt assembly: a stack's prompt template with `{{variable}}` placeholders (see
// prompt-variables.ts for the catalogue), filled from the context bundle, and its hash.
import { AppError } from "@/server/errors";
import type { ContextBundle } from "./context-bundle";
import { contentDigest } from "@/server/lib/digest";
import {
  ATTRIBUTION_HEADING,
  INSTRUCTIONS_HEADING,
  PLACEHOLDER,
  attributionLines,
  PROMPT_VARIABLES,
  PROMPT_VARIABLE_NAMES,
  checkPromptTemplate,
  toText,
  type PromptVariable,
} from "./prompt-variables";

export { PROMPT_VARIABLE_NAMES, checkPromptTemplate, type PromptVariable } from "./prompt-variables";

export type RenderedPrompt = {
  prompt: string;
  /** sha256 hex of the prompt text: AgentDispatchRun.promptHash. */
  promptHash: string;
  variables: PromptVariable[];
};

/**
 * Fill a template from a bundle. Unknown or malformed placeholders are an UNPROCESSABLE AppError
 * that lists all of them (and the known names), never a silently empty prompt.
 */
export function renderPrompt(template: string, bundle: ContextBundle, digest: string): RenderedPrompt {
  const check = checkPromptTemplate(template);
  if (check.unknown.length > 0 || check.malformed.length > 0) {
    const parts = [
      check.unknown.length > 0 ? `unknown prompt variables: ${check.unknown.map((n) => `{{${n}}}`).join(", ")}` : null,
      check.malformed.length > 0 ? `malformed placeholders: ${check.malformed.map((m) => JSON.stringify(m)).join(", ")}` : null,
    ].filter(Boolean);
    throw new AppError("UNPROCESSABLE", `${parts.join("; ")} (known: ${PROMPT_VARIABLE_NAMES.join(", ")})`, {
      reason: "invalid_prompt_template",
      details: { unknown: check.unknown, malformed: check.malformed },
    });
  }
  let prompt = template.replace(PLACEHOLDER, (whole, dollar: string, raw: string) => {
    if (dollar === "$") return whole;
    return toText(PROMPT_VARIABLES[raw.trim() as PromptVariable].render(bundle, digest));
  });
  // The agent must learn whose red check this is even when the stack's template does not ask.
  if (bundle.attribution && bundle.attribution.length > 0 && !check.variables.includes("attribution")) {
    prompt = `${prompt.trimEnd()}\n\n${ATTRIBUTION_HEADING}\n${attributionLines(bundle.attribution)}\n`;
  }
  // A person's instructions (manual dispatch) reach the agent whatever the template places.
  const asked = bundle.contextLabels.filter((l) => l.provenance.source === "user");
  if (asked.length > 0 && !check.variables.includes("contextLabels")) {
    prompt = `${prompt.trimEnd()}\n\n${INSTRUCTIONS_HEADING}\n${asked.map((l) => l.fragment).join("\n\n")}\n`;
  }
  return { prompt, promptHash: promptHash(prompt), variables: check.variables };
}

export function promptHash(prompt: string): string {
  return contentDigest(prompt);
}
