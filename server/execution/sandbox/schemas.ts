// What the browser may import of the sandbox: its schemas and formatters (no Node imports).
export * from "./policy";
