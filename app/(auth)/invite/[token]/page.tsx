import { TRPCError } from "@trpc/server";
import type { Metadata } from "next";
import Link from "next/link";
import { AcceptInvitationForm } from "@/components/auth/accept-invitation-form";
import { githubSignInEnabled } from "@/server/auth";
import { isAppError } from "@/server/errors";
import { serverCaller } from "@/server/trpc/server";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Your invitation" };

export default async function InvitationPage({ params }: { params: Promise<{ token: string }> }) {
  const { token } = await params;
  // A malformed link (BAD_REQUEST) or an unknown one: say so plainly; the domain's refusals as written.
  const invitation = await (await serverCaller()).invitation.lookup({ token }).catch((err: unknown) => ({
    refusal: err instanceof TRPCError && isAppError(err.cause) ? err.message : "This invitation link is not valid.",
    email: null,
    expiresAt: null,
    invitedBy: null,
  }));
  return (
    <main className="flex min-h-screen items-center justify-center p-6">
      <div className="w-full max-w-sm">
        <div className="mb-8 text-center">
          <div className="mx-auto mb-3 flex size-10 items-center justify-center rounded-lg bg-indigo-600 font-mono text-lg font-bold text-white">A</div>
          <h1 className="text-xl font-semibold">Your Airlock invitation</h1>
          {invitation.email && (
            <p className="mt-1 text-sm text-zinc-500">
              {invitation.invitedBy ? `${invitation.invitedBy} invited` : "You are invited as"} <span className="font-medium">{invitation.email}</span>
              {invitation.expiresAt && <> · until {invitation.expiresAt.toISOString().slice(0, 16).replace("T", " ")} UTC</>}
            </p>
          )}
        </div>
        {invitation.refusal || !invitation.email ? (
          <div className="space-y-3 text-center">
            <p role="alert" className="rounded-md bg-red-50 px-3 py-2 text-sm text-red-800 dark:bg-red-950 dark:text-red-300">{invitation.refusal}</p>
            <Link href="/sign-in" className="text-sm text-indigo-700 hover:underline dark:text-indigo-400">Sign in</Link>
          </div>
        ) : (
          <AcceptInvitationForm token={token} email={invitation.email} github={githubSignInEnabled()} />
        )}
      </div>
    </main>
  );
}
