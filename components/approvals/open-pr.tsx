import { ArtifactBody } from "@/components/runs/artifact-view";
import { CopyButton } from "@/components/ui/copy-button";
import type { Presented, PresentedOpenPr } from "@/server/domain/approvals/schemas";
import { Field } from "./fields";
import { PostedWords } from "./posted-words";

// open_pr on the approval screen: the new branch (name, the commit it starts from), the PR's base,
// its title and its body byte for byte (PostedWords), then the patch the branch's one commit
// carries. These are the very fields the executor sends.

type ArtifactForView = { name: string; kind: string; mediaType: string; content: string | null } | null;

export function OpenPrView({ openPr, presented, artifact, artifactDigest }: { openPr: PresentedOpenPr; presented: Presented; artifact: ArtifactForView; artifactDigest: string | null }) {
  return (
    <>
      <section aria-label="Pull request to open" className="space-y-2">
        <h2 className="font-medium">Pull request to open</h2>
        <dl className="grid gap-3 sm:grid-cols-2">
          <Field label="New branch">
            <span className="font-mono text-xs" data-testid="open-pr-branch">{openPr.branch}</span>
            <CopyButton value={openPr.branch} what="branch name" className="ml-0.5 align-middle" />
          </Field>
          <Field label="Starts at">
            <span className="font-mono text-xs">{openPr.fromSha}</span> (the commit the agent worked on)
          </Field>
          <Field label="Base">
            <span className="font-mono text-xs" data-testid="open-pr-base">{openPr.base}</span>
          </Field>
          <Field label="Title">
            <span data-testid="open-pr-title">{openPr.title}</span>
          </Field>
        </dl>
        <p className="text-xs text-zinc-600 dark:text-zinc-400">
          The branch must not exist yet: if it does, the forge refuses and nothing is opened.
        </p>
      </section>
      <PostedWords action="open_pr" presented={presented} artifactName={artifact?.name ?? null} artifactDigest={artifactDigest} body={openPr.body} where={`a new pull request from ${openPr.branch} into ${openPr.base}`} />
      <section aria-label="Artifact" className="space-y-2">
        <h2 className="font-medium">Patch committed on {openPr.branch}</h2>
        <p className="font-mono text-xs break-all" data-testid="artifact-digest">
          {artifact?.name} {artifactDigest}
        </p>
        {artifact?.content ? <ArtifactBody artifact={{ ...artifact, content: artifact.content }} /> : <p className="text-sm">The patch is not available.</p>}
      </section>
    </>
  );
}
