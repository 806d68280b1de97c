import { Validator } from "@seriousme/openapi-schema-validator";
import { describe, expect, it } from "vitest";
import { openApiDocument } from "./openapi";
import { restRoutes } from "./routes";

describe("the OpenAPI document", () => {
  it("validates as OpenAPI 3.1", async () => {
    const result = await new Validator().validate(openApiDocument("http://localhost:3000"));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it("documents every route, with the procedures' own bounds", () => {
    const doc = openApiDocument("http://localhost:3000");
    for (const r of restRoutes) expect(doc.paths[r.path]?.[r.method.toLowerCase()], `${r.method} ${r.path}`).toBeDefined();
    const list = doc.paths["/runs"]!.get as { parameters: { name: string; schema: { maximum?: number } }[] };
    expect(list.parameters.find((p) => p.name === "limit")?.schema.maximum).toBe(100);
    const approve = doc.paths["/approvals/{approvalId}/approve"]!.post as { requestBody: { content: { "application/json": { schema: { properties: Record<string, unknown> } } } } };
    expect(Object.keys(approve.requestBody.content["application/json"].schema.properties).sort()).toEqual(["artifactDigest", "headSha"]);
  });
});
