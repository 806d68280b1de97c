// Context bundle schemas and the prompt variable catalogue, for code that renders bundles or
// checks prompt templates without assembling anything (the stack editor). Nothing here needs Node.
export * from "./context-bundle";
export { PROMPT_VARIABLES, PROMPT_VARIABLE_NAMES, checkPromptTemplate } from "./prompt-variables";
