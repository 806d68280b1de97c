import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { SignInForm } from "@/components/auth/sign-in-form";
import { githubSignInEnabled } from "@/server/auth";
import { currentUser } from "@/server/trpc/server";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Sign in" };

export default async function SignInPage({ searchParams }: { searchParams: Promise<{ next?: string; error?: string }> }) {
  const { next, error } = await searchParams;
  // Only same-site paths: never bounce a user to another origin after sign-in.
  const target = next && next.startsWith("/") && !next.startsWith("//") ? next : "/runs";
  if (await currentUser()) redirect(target);
  return (
    <main className="flex min-h-screen items-center justify-center p-6">
      <div className="w-full max-w-sm">
        <div className="mb-8 text-center">
          <div className="mx-auto mb-3 flex size-10 items-center justify-center rounded-lg bg-indigo-600 font-mono text-lg font-bold text-white">
            A
          </div>
          <h1 className="text-xl font-semibold">Sign in to Airlock</h1>
          <p className="mt-1 text-sm text-zinc-500">Agent CI runs, and every write-back they ask for.</p>
        </div>
        <SignInForm next={target} github={githubSignInEnabled()} refused={typeof error === "string" ? error.slice(0, 50) : null} />
        <p className="mt-4 text-center text-xs text-zinc-500">Accounts are by invitation: an Airlock admin invites you.</p>
      </div>
    </main>
  );
}
