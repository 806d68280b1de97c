"use client";

import { zodResolver } from "@hookform/resolvers/zod";
import { useMutation } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { FormProvider, useForm } from "react-hook-form";
import { TextField } from "@/components/forms/fields";
import { applyServerErrors, type ServerError } from "@/components/forms/server-errors";
import { authClient } from "@/components/providers/auth-client";
import { useTRPC } from "@/components/providers/trpc";
import { Button } from "@/components/ui/button";
import { zAcceptInvitationInput, type AcceptInvitationFormValues } from "@/server/domain/users/schemas";

// Accepting an invitation: the person names themselves and chooses a password (the email is the
// invitation's), then is signed in. Or signs in with a GitHub account whose verified email is the
// invited one.

export function AcceptInvitationForm({ token, email, github }: { token: string; email: string; github: boolean }) {
  const trpc = useTRPC();
  const router = useRouter();
  const [error, setError] = useState<string | null>(null);
  const accept = useMutation(trpc.invitation.accept.mutationOptions());
  const form = useForm<AcceptInvitationFormValues>({ resolver: zodResolver(zAcceptInvitationInput), mode: "onTouched", defaultValues: { token, name: "", password: "" } });
  const onSubmit = form.handleSubmit(async (values) => {
    setError(null);
    try {
      await accept.mutateAsync(values);
    } catch (err) {
      const rest = applyServerErrors(form, err as ServerError);
      setError(rest[0] ?? (err as ServerError).message);
      return;
    }
    // Sign-in is limited to a few attempts per address every 10 s: wait for the window, a few times.
    let failure: { status: number; message?: string } | null = null;
    for (let attempt = 0; attempt < 4; attempt++) {
      failure = (await authClient.signIn.email({ email, password: values.password })).error;
      if (failure?.status !== 429) break;
      await new Promise((r) => setTimeout(r, 4_000));
    }
    if (failure) {
      setError(`Your account is made; sign in failed (${failure.message ?? failure.status}). Sign in from the sign-in page.`);
      return;
    }
    router.replace("/runs");
    router.refresh();
  });
  return (
    <div className="rounded-xl border border-zinc-200 bg-white p-6 shadow-sm dark:border-zinc-800 dark:bg-zinc-900">
      <FormProvider {...form}>
        <form onSubmit={onSubmit} noValidate aria-label="Make your account" className="space-y-4">
          <TextField name="name" label="Your name" />
          <TextField name="password" label="Choose a password" type="password" hint="At least 8 characters" />
          {error && (
            <p role="alert" className="rounded-md bg-red-50 px-3 py-2 text-sm text-red-800 dark:bg-red-950 dark:text-red-300">
              {error}
            </p>
          )}
          <Button type="submit" variant="primary" className="w-full" disabled={accept.isPending}>
            {accept.isPending ? "Making your account…" : `Make the account for ${email}`}
          </Button>
        </form>
      </FormProvider>
      {github && (
        <>
          <Button type="button" className="mt-3 w-full" onClick={() => authClient.signIn.social({ provider: "github", callbackURL: "/runs", errorCallbackURL: "/sign-in" })}>
            Sign in with GitHub instead
          </Button>
          <p className="mt-2 text-xs text-zinc-500">Your GitHub account must have {email} as a verified email.</p>
        </>
      )}
    </div>
  );
}
