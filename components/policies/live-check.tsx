"use client";

import { useMutation } from "@tanstack/react-query";
import { useEffect, useRef, type Dispatch, type SetStateAction } from "react";
import { useFormContext, useWatch } from "react-hook-form";
import type { z } from "zod";
import { zPolicyDefinition, type PolicyDefinition, type PolicyDefinitionInput } from "@/server/domain/policy/schemas";
import { useTRPC } from "@/components/providers/trpc";
import type { CheckState } from "./check-panel";

// Watches the form and, 400 ms after the last edit, runs `policies.check` on the rules as they
// stand. Only the newest answer is kept. Renders nothing: the panel and the save button read
// the state it reports.

const DEBOUNCE_MS = 400;

function describeIssues(error: z.ZodError, values: Partial<PolicyDefinitionInput>): string[] {
  const lines = error.issues.map((issue) => {
    const [head, index, ...rest] = issue.path;
    if (head === "rules" && typeof index === "number") {
      const name = values.rules?.[index]?.name;
      const field = rest.filter((p) => typeof p === "string" && !["all", "any", "none"].includes(p))[0] ?? "";
      return `Rule ${index + 1}${name ? ` (${name})` : ""}${field ? ` ${String(field)}` : ""}: ${issue.message}`;
    }
    return `${issue.path.join(".") || "definition"}: ${issue.message}`;
  });
  return [...new Set(lines)];
}

export function LiveCheck({ onState }: { onState: Dispatch<SetStateAction<CheckState>> }) {
  const trpc = useTRPC();
  const { control } = useFormContext<PolicyDefinitionInput, unknown, PolicyDefinition>();
  const values = useWatch({ control });
  const { mutateAsync } = useMutation(trpc.policies.check.mutationOptions());
  const latest = useRef(0);

  useEffect(() => {
    const id = ++latest.current;
    const parsed = zPolicyDefinition.safeParse(values);
    if (!parsed.success) {
      const formErrors = describeIssues(parsed.error, values as Partial<PolicyDefinitionInput>);
      onState((prev) => ({ ...prev, formErrors, pending: false }));
      return;
    }
    onState((prev) => ({ ...prev, formErrors: [], pending: true }));
    const timer = setTimeout(() => {
      mutateAsync({ definition: parsed.data }).then(
        (review) => {
          if (id === latest.current) onState({ review, formErrors: [], pending: false, error: null });
        },
        (err: unknown) => {
          if (id === latest.current) {
            onState((prev) => ({ ...prev, pending: false, error: err instanceof Error ? err.message : "The check failed." }));
          }
        },
      );
    }, DEBOUNCE_MS);
    return () => clearTimeout(timer);
  }, [values, mutateAsync, onState]);

  return null;
}
