import { Validator } from "@seriousme/openapi-schema-validator";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { zProofNode } from "@/server/domain/policy/proof";
import { hoistDefs, openApiDocument } from "./openapi";
import { restRoutes } from "./routes";
import { jsonSchemaOf } from "./schemas";

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

  it("keeps no nested $defs: a recursive output's definitions move to components.schemas, and the document still validates", async () => {
    expect(JSON.stringify(openApiDocument("http://localhost:3000"))).not.toContain("$defs");
    const recursive = jsonSchemaOf(z.object({ proof: zProofNode }), "output");
    expect(recursive.$defs).toBeDefined();
    const components: Record<string, Record<string, unknown>> = {};
    const schema = hoistDefs(recursive, "getProof", components);
    expect(JSON.stringify(schema)).not.toContain("$defs");
    expect(Object.keys(components).length).toBeGreaterThan(0);
    for (const ref of JSON.stringify({ schema, components }).match(/#\/components\/schemas\/[^"]+/g) ?? []) expect(Object.keys(components)).toContain(ref.split("/").pop());
    const doc = {
      openapi: "3.1.0",
      info: { title: "t", version: "1" },
      paths: { "/proof": { get: { operationId: "getProof", responses: { "200": { description: "OK", content: { "application/json": { schema } } } } } } },
      components: { schemas: components },
    };
    const result = await new Validator().validate(doc);
    expect(result.errors ?? []).toEqual([]);
    // A schema recursive at its root ("$ref": "#") becomes a component itself.
    const rooted: Record<string, Record<string, unknown>> = {};
    expect(hoistDefs(jsonSchemaOf(zProofNode, "output"), "getNode", rooted)).toEqual({ $ref: "#/components/schemas/getNode" });
    expect(JSON.stringify(rooted)).not.toMatch(/"\$ref":"#"|\$defs/);
  });
});
