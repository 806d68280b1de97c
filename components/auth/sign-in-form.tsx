"use client";

import { useRouter } from "next/navigation";
import { useState } from "react";
import { authClient } from "@/components/providers/auth-client";
import { Alert } from "@/components/ui/alert";
import { Button } from "@/components/ui/button";
import { Card } from "@/components/ui/card";

// What a refused GitHub sign-in comes back with (?error=...), in our words: the code is all that
// is read from the URL, so a crafted link cannot put its own text on this page.
const signInErrors: Record<string, string> = {
  not_invited: "This GitHub account is not invited to Airlock. Ask an Airlock admin for an invitation.",
  no_longer_member: "This GitHub account is no longer a member of the organisation Airlock admits.",
  sign_up_disabled: "Accounts are by invitation: ask an Airlock admin.",
  account_not_linked: "An account with this email exists but is not linked to GitHub: sign in with its password.",
};

export function SignInForm({ next, github, refused }: { next: string; github: boolean; refused?: string | null }) {
  const router = useRouter();
  const [error, setError] = useState<string | null>(refused ? (signInErrors[refused] ?? "Sign-in with GitHub failed; try again.") : null);
  const [pending, setPending] = useState(false);

  async function onSubmit(e: React.FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    setPending(true);
    setError(null);
    const { error: failure } = await authClient.signIn.email({
      email: String(form.get("email") ?? ""),
      password: String(form.get("password") ?? ""),
    });
    setPending(false);
    if (failure) {
      setError(failure.status === 401 ? "Wrong email or password." : failure.status === 429 ? "Too many attempts: wait a few seconds and try again." : (failure.message ?? "Sign-in failed; try again."));
      return;
    }
    router.replace(next);
    router.refresh();
  }

  return (
    <Card className="rounded-xl p-6 shadow-sm">
      <form onSubmit={onSubmit} className="space-y-4" noValidate>
        <label className="block text-sm font-medium">
          Email
          <input
            name="email"
            type="email"
            autoComplete="username"
            required
            className="mt-1 block w-full rounded-md border border-zinc-300 bg-white px-3 py-2 text-sm shadow-xs focus:border-indigo-500 focus:outline-none dark:border-zinc-700 dark:bg-zinc-950"
          />
        </label>
        <label className="block text-sm font-medium">
          Password
          <input
            name="password"
            type="password"
            autoComplete="current-password"
            required
            className="mt-1 block w-full rounded-md border border-zinc-300 bg-white px-3 py-2 text-sm shadow-xs focus:border-indigo-500 focus:outline-none dark:border-zinc-700 dark:bg-zinc-950"
          />
        </label>
        {error && (
          <Alert variant="banner">{error}</Alert>
        )}
        <Button type="submit" variant="primary" className="w-full" disabled={pending}>
          {pending ? "Signing in…" : "Sign in"}
        </Button>
      </form>
      {github && (
        <Button
          type="button"
          className="mt-3 w-full"
          onClick={() => authClient.signIn.social({ provider: "github", callbackURL: next, errorCallbackURL: "/sign-in" })}
        >
          Sign in with GitHub
        </Button>
      )}
    </Card>
  );
}
