"use client";

import Link from "next/link";
import { usePathname } from "next/navigation";
import { Alert } from "@/components/ui/alert";
import { Button, buttonVariants } from "@/components/ui/button";
import { Card } from "@/components/ui/card";

// What a console route shows when its page failed to render, or names nothing: said plainly,
// inside the console's shell, with a way on. A server error's text is never shown (it can carry
// internals); its digest matches the server log.

export function RouteError({ error, retry }: { error: Error & { digest?: string }; retry: () => void }) {
  return (
    <Card as="section" aria-labelledby="route-error-heading" className="mx-auto max-w-xl space-y-3">
      <h1 id="route-error-heading" className="text-lg font-semibold">
        This page could not be shown
      </h1>
      <Alert variant="banner">
        {error.digest ? `Something went wrong on the server (reference ${error.digest}); it has been logged.` : error.message || "Something went wrong in the page."}
      </Alert>
      <div className="flex flex-wrap gap-2">
        <Button variant="primary" onClick={retry}>
          Try again
        </Button>
        <Link href="/runs" className={buttonVariants()}>
          Go to runs
        </Link>
      </div>
    </Card>
  );
}

export function RouteNotFound() {
  const path = usePathname();
  return (
    <Card as="section" aria-labelledby="not-found-heading" className="mx-auto max-w-xl space-y-3" data-testid="not-found">
      <h1 id="not-found-heading" className="text-lg font-semibold">
        Not found
      </h1>
      <p className="text-sm text-zinc-600 dark:text-zinc-400">
        Nothing here answers to <code className="font-mono break-all">{path}</code>: the address is wrong, or what it named was removed.
      </p>
      <Link href="/runs" className={buttonVariants({ variant: "primary" })}>
        Go to runs
      </Link>
    </Card>
  );
}
