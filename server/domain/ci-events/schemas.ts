// The enum lists and their zod schemas, for code that validates or renders them without running
// evaluation (forms, the runs and triggers pages). Nothing here needs Node.
export * from "./enums";
