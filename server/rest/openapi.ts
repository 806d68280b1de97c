import { pathParams, restRoutes, type RestRoute } from "./routes";
import { jsonSchemaOf, procedureInput, procedureKind, procedureOutput } from "./schemas";

// The OpenAPI 3.1 document of /api/v1, generated from the route table and the procedures' own zod
// schemas (JSON Schema 2020-12, which OpenAPI 3.1 uses as is). Responses are typed where the
// procedure declares an output schema; elsewhere the document says the body is the procedure's
// JSON (dates as ISO text).

type Schema = Record<string, unknown>;

const errorSchema: Schema = {
  type: "object",
  required: ["error"],
  properties: {
    error: {
      type: "object",
      required: ["code", "message"],
      properties: {
        code: { type: "string" },
        message: { type: "string" },
        reason: { type: ["string", "null"], description: "A stable, machine-readable reason, e.g. `stale_digest`." },
        fieldErrors: { type: ["object", "null"], additionalProperties: { type: "array", items: { type: "string" } } },
        details: { type: ["object", "null"] },
      },
    },
  },
};

const errors = {
  "400": { description: "Invalid input", content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } } },
  "401": { description: "No token, or a revoked, expired or unknown one", content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } } },
  "403": { description: "The token's role or repositories do not allow this", content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } } },
  "404": { description: "No such object", content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } } },
};

/**
 * A JSON Schema with zod's `$defs` (recursive shapes such as a proof tree or a condition) moved
 * into `components.schemas` under names prefixed by the operation, and its `#/$defs/...` refs
 * pointed there: OpenAPI resolves a ref against the document, where a nested `$defs` has no home.
 */
export function hoistDefs(schema: Schema, prefix: string, components: Record<string, Schema>): Schema {
  const { $defs, $schema: _dialect, ...rest } = schema as Schema & { $defs?: Record<string, Schema>; $schema?: string };
  const rename = (name: string) => `${prefix}_${name.replace(/[^A-Za-z0-9._-]/g, "_")}`;
  const rewrite = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(rewrite);
    if (!value || typeof value !== "object") return value;
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, k === "$ref" && typeof v === "string" && v.startsWith("#/$defs/") ? `#/components/schemas/${rename(v.slice("#/$defs/".length))}` : rewrite(v)]),
    );
  };
  for (const [name, def] of Object.entries($defs ?? {})) components[rename(name)] = rewrite(def) as Schema;
  const root = rewrite(rest) as Schema;
  // A schema that refers to itself as a whole ("#") becomes a component of its own.
  if (!JSON.stringify(root).includes('"$ref":"#"')) return root;
  const self = { $ref: `#/components/schemas/${prefix}` };
  const selfRef = (value: unknown): unknown =>
    Array.isArray(value) ? value.map(selfRef) : value && typeof value === "object" ? Object.fromEntries(Object.entries(value).map(([k, v]) => (k === "$ref" && v === "#" ? [k, self.$ref] : [k, selfRef(v)]))) : value;
  components[prefix] = selfRef(root) as Schema;
  return self;
}

/** An operation id from a path: GET /runs/{runId}/events → getRunsRunIdEvents. */
const operationId = (route: RestRoute) =>
  route.method.toLowerCase() +
  route.path
    .split(/[/{}.]+/)
    .filter(Boolean)
    .map((s) => s[0]!.toUpperCase() + s.slice(1))
    .join("");

function operation(route: RestRoute, components: Record<string, Schema>) {
  const names = pathParams(route.path);
  const parameters: Schema[] = names.map((name) => ({ name, in: "path", required: true, schema: { type: "string", minLength: 1, maxLength: 100 } }));
  let requestBody: Schema | undefined;
  let success: Schema = { description: route.produces?.description ?? "OK", content: { [route.produces?.type ?? "application/json"]: { schema: {} } } };
  if (route.procedure) {
    const input = hoistDefs(jsonSchemaOf(procedureInput(route.procedure, names), "input"), `${operationId(route)}Input`, components);
    const properties = (input.properties ?? {}) as Record<string, Schema>;
    const required = new Set((input.required ?? []) as string[]);
    if (route.method === "GET") {
      for (const [name, schema] of Object.entries(properties)) parameters.push({ name, in: "query", required: required.has(name), schema });
    } else {
      requestBody = { required: required.size > 0, content: { "application/json": { schema: input } } };
    }
    const output = procedureOutput(route.procedure);
    success = {
      description: output ? "OK" : `The ${procedureKind(route.procedure)} ${route.procedure}'s result as JSON`,
      content: { "application/json": { schema: output ? hoistDefs(jsonSchemaOf(output, "output"), `${operationId(route)}Output`, components) : { type: "object" } } },
    };
  }
  for (const q of route.query ?? []) parameters.push({ name: q.name, in: "query", required: false, description: q.description, schema: q.schema });
  if (route.handler === "eventStream") parameters.push({ name: "Last-Event-ID", in: "header", required: false, description: "Resume after this seq", schema: { type: "string", maxLength: 20 } });
  if (route.handler === "transcriptJsonl" || route.handler === "transcriptMarkdown") {
    parameters.push({ name: "download", in: "query", required: false, description: "`1`: as an attachment", schema: { type: "string", enum: ["1"] } });
  }
  return {
    operationId: operationId(route),
    summary: route.summary,
    tags: [route.tag],
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(requestBody ? { requestBody } : {}),
    responses: { "200": success, ...errors },
  };
}

export function openApiDocument(origin: string) {
  const paths: Record<string, Record<string, unknown>> = {};
  const schemas: Record<string, Schema> = { Error: errorSchema };
  for (const route of restRoutes) (paths[route.path] ??= {})[route.method.toLowerCase()] = operation(route, schemas);
  return {
    openapi: "3.1.0",
    info: {
      title: "Airlock REST API",
      version: "1",
      description:
        "Runs, their events, approvals, stacks, trigger rules and webhook deliveries. Authenticate with an API token (`Authorization: Bearer airlock_…`, made under Settings → API tokens); session cookies are not accepted. A token acts as its owner on the repositories it names, at most at its role.",
    },
    servers: [{ url: `${origin}/api/v1` }],
    security: [{ apiToken: [] }],
    tags: [
      { name: "runs" },
      { name: "events" },
      { name: "approvals" },
      { name: "stacks" },
      { name: "triggers" },
      { name: "deliveries" },
      { name: "tokens" },
    ],
    paths,
    components: {
      securitySchemes: { apiToken: { type: "http", scheme: "bearer", description: "An Airlock API token" } },
      schemas,
    },
  };
}

export type OpenApiDocument = ReturnType<typeof openApiDocument>;
