"use client";

import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { ChangeList, LineDiffView } from "@/components/forms/change-list";
import { VersionChanges, VersionList } from "@/components/forms/version-list";
import { useTRPC } from "@/components/providers/trpc";
import { Alert } from "@/components/ui/alert";
import { SkeletonLines } from "@/components/ui/skeleton";

// Every saved version of a stack, newest first; picking one shows its structural diff from the
// version before (fields, set items added and removed, the prompt template line by line).

type Version = { version: number; digest: string; createdAt: Date; createdBy: string | null };

export function StackVersions({ stackId, versions }: { stackId: string; versions: readonly Version[] }) {
  const trpc = useTRPC();
  const newest = versions[0]?.version ?? 1;
  const [picked, setPicked] = useState<number | null>(null);
  const selected = picked ?? (newest > 1 ? newest : null);
  const diff = useQuery({ ...trpc.stacks.diff.queryOptions({ stackId, from: Math.max(1, (selected ?? 2) - 1), to: selected ?? 2 }), enabled: selected !== null && selected > 1 });
  return (
    <section aria-label="Versions" className="space-y-3">
      <h2 className="text-xs font-semibold tracking-wide text-zinc-500 uppercase">Versions</h2>
      <VersionList
        items={versions.map((v) => ({ version: v.version, by: v.createdBy ?? "seeded", createdAt: v.createdAt, digest: v.digest, testId: `stack-version-${v.version}` }))}
        selected={selected}
        onPick={setPicked}
      />
      {selected !== null && selected > 1 && (
        <VersionChanges version={selected}>
          {diff.isPending && <SkeletonLines lines={3} />}
          {diff.error && <Alert>{diff.error.message}</Alert>}
          {diff.data && (
            <>
              <ChangeList changes={diff.data.changes.filter((c) => c.path !== "promptTemplate")} empty={diff.data.promptTemplate ? "Only the prompt template changed." : "No differences in the spec (name or description only)."} />
              {diff.data.promptTemplate && <LineDiffView lines={diff.data.promptTemplate} label={`Prompt template changes in v${selected}`} />}
            </>
          )}
        </VersionChanges>
      )}
    </section>
  );
}
