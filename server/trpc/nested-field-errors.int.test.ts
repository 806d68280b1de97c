// A nested zod issue travels from a procedure's input schema through the real tRPC error formatter
// (HTTP, as the browser calls it) to react-hook-form and renders under the nested input, not on
// the top-level field. Written without JSX so it runs in the integration project (*.int.test.ts).
import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { createFormControl, FormProvider, type FieldValues, type UseFormReturn } from "react-hook-form";
import { beforeAll, describe, expect, it } from "vitest";
import { TextField } from "@/components/forms/fields";
import { applyServerErrors, type ServerError } from "@/components/forms/server-errors";
import type { SessionUser } from "@/server/auth/roles";
import { callHttp, stackInput } from "@/server/testing/config-factories";
import { createRepository, createUser } from "@/server/testing/factories";

let maintainer: SessionUser;

beforeAll(async () => {
  maintainer = await createUser();
  await createRepository({ members: [[maintainer, "maintainer"]] });
});

const mcp = (name: string, target: string) => ({ name, transport: "http" as const, target, secrets: [], configMaps: [], privileged: false, required: true });

function badThirdServer() {
  return stackInput({ spec: { mcpServers: [mcp("sentry", "https://mcp.sentry.dev/mcp"), mcp("ci", "https://ci.example/mcp"), mcp("docs", "ftp://docs.example")] } });
}

describe("nested server field errors", () => {
  it("the formatter keys a nested issue by its dotted path", async () => {
    const res = await callHttp(maintainer, "stacks.create", badThirdServer());
    expect(res.status).toBe(400);
    const fieldErrors = res.error?.data.fieldErrors ?? {};
    expect(fieldErrors["spec.mcpServers.2.target"]).toEqual(["An http or sse server needs an http(s) URL"]);
    // Not flattened onto the top-level field, and no other server is blamed.
    expect(Object.keys(fieldErrors)).toEqual(["spec.mcpServers.2.target"]);
  });

  it("the form shows the server's nested error under the nested input only", async () => {
    const input = badThirdServer();
    const res = await callHttp(maintainer, "stacks.create", input);
    const error = { message: res.error!.message, data: res.error!.data } as ServerError;

    const methods = createFormControl<FieldValues>({ defaultValues: input });
    // The form state a rendered field reads (useForm adds it; createFormControl leaves it out).
    const form: UseFormReturn<FieldValues> = { ...methods, formState: methods.control._formState };
    expect(applyServerErrors(form, error)).toEqual([]);

    const render = (i: number) =>
      renderToStaticMarkup(
        // FormProvider's props type requires `children` (no JSX in a .ts file).
        // eslint-disable-next-line react/no-children-prop
        createElement(FormProvider, { ...form, children: createElement(TextField, { name: `spec.mcpServers.${i}.target`, label: `Server ${i} URL` }) }),
      );
    const third = render(2);
    expect(third).toContain("An http or sse server needs an http(s) URL");
    expect(third).toContain('aria-invalid="true"');
    expect(render(1)).not.toContain("http(s) URL");
  });
});
