// Context bundle schemas, the redaction report and the prompt variable catalogue, for code that
// renders bundles or checks prompt templates without assembling anything (the run page, the
// stack editor). Nothing here needs Node.
export * from "./context-bundle";
export { SECRET_KINDS, zRedactionEntry, zRedactionReport, type RedactionEntry, type RedactionReport } from "./redaction/report";
export { KIND_REASONS, type SecretKind } from "./redaction/patterns";
export {
  PROMPT_VARIABLES,
  PROMPT_VARIABLE_NAMES,
  checkPromptTemplate,
  type PromptVariable,
  type TemplateCheck,
} from "./prompt-variables";
export { canonicalJson } from "@/server/lib/canonical-json";
