"use client";

import { RouteError } from "@/components/layout/route-states";

// Every console route's error boundary: the shell stays, the page says what failed.
export default function ConsoleError(props: { error: Error & { digest?: string }; retry: () => void }) {
  return <RouteError {...props} />;
}
