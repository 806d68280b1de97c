"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useTRPC } from "@/components/providers/trpc";
import { DetailPageSkeleton } from "@/components/layout/page-skeletons";
import { Alert } from "@/components/ui/alert";
import { Badge } from "@/components/ui/badge";
import { Card } from "@/components/ui/card";
import { CopyButton } from "@/components/ui/copy-button";
import { plainTerminalText } from "@/components/transcript/ansi";
import { DiffView } from "@/components/transcript/diff-view";
import { SafeMarkdown } from "@/components/transcript/safe-markdown";
import { TerminalText } from "@/components/transcript/terminal-text";

// One artifact of a run: a patch as a diff, a diagnosis or report as
// (sanitised) Markdown, a log as terminal output. Content is bounded by the
// server (under 2 MB per response); a cut is said out loud, never silent.

export function ArtifactView({ runId, artifactId }: { runId: string; artifactId: string }) {
  const trpc = useTRPC();
  const artifact = useQuery(trpc.runs.artifact.queryOptions({ runId, artifactId }));
  if (artifact.isPending) return <DetailPageSkeleton label="Loading the artifact" panels={1} />;
  if (artifact.error) return <Alert>{artifact.error.message}</Alert>;
  const a = artifact.data;
  const content = a.content ?? "";
  return (
    <div className="space-y-4">
      <header className="space-y-1">
        <nav aria-label="Breadcrumb" className="text-sm text-zinc-600 dark:text-zinc-400">
          <Link href="/runs" className="hover:underline">
            Runs
          </Link>{" "}
          /{" "}
          <Link href={`/runs/${runId}`} className="hover:underline">
            Run
          </Link>{" "}
          / artifact
        </nav>
        <div className="flex flex-wrap items-center gap-2">
          <h1 className="font-mono text-lg font-semibold break-all">{a.name}</h1>
          <Badge>{a.kind}</Badge>
          <span className="text-sm text-zinc-600 dark:text-zinc-400">{a.sizeBytes.toLocaleString("en")} bytes</span>
        </div>
        <p className="flex items-center gap-1 font-mono text-xs break-all text-zinc-600 dark:text-zinc-400">
          {a.digest} <CopyButton value={a.digest} what="digest" />
        </p>
        {a.masked.length > 0 && (
          <Alert role="status" tone="danger" variant="banner" data-testid="artifact-masked">
            {a.kind === "patch"
              ? "Shown with secrets masked; the digest names the original bytes, which are withheld: pushing them is refused unless an admin overrides on the approval screen. "
              : "Secrets were masked before this was stored; the digest is of the stored text. "}
            Masked: {a.masked.map((m) => `${m.kind}${m.name ? `:${m.name}` : ""} ×${m.count}`).join(", ")}.
          </Alert>
        )}
        {a.truncated && (
          <Alert role="status" tone="warning" variant="banner">
            Showing the first {content.length.toLocaleString("en")} characters of {a.sizeBytes.toLocaleString("en")} bytes: the rest is not sent to the browser.
          </Alert>
        )}
      </header>
      {a.content === null ? (
        <p className="text-sm text-zinc-600 dark:text-zinc-400">Stored outside Airlock{a.location ? `: ${plainTerminalText(a.location)}` : ""}.</p>
      ) : (
        <ArtifactBody artifact={{ ...a, content }} />
      )}
    </div>
  );
}

/** An artifact's text as what it is: a patch as a diff, a diagnosis or report as Markdown, anything else as terminal output. */
export function ArtifactBody({ artifact: a }: { artifact: { kind: string; name: string; mediaType: string; content: string } }) {
  const markdown = a.kind === "diagnosis" || a.kind === "report" || a.mediaType.includes("markdown") || a.name.endsWith(".md");
  if (a.kind === "patch") return <DiffView patch={a.content} />;
  if (markdown) {
    return (
      <Card as="article">
        <SafeMarkdown text={plainTerminalText(a.content)} />
      </Card>
    );
  }
  return <TerminalText text={a.content} startLine={1} anchorPrefix="L" label={a.name} maxLines={5_000} />;
}
